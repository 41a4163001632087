"""Chapters 7 and 8: every number the two chapters state, against the monograph's value,
the new memkit functions (block, projection gradients, per-head counts) and the data of
the figures attention-gradient-graph, key-training and residual-bus."""

from fractions import Fraction

import numpy as np
import pytest

from memkit import attention, block, checks, costs, linalg
from memkit.figures import attention_gradient_graph, key_training, residual_bus
from support.cheats import LIAR_SOURCE


# --------------------------------------------------------------------------- Chapter 7


def test_only_the_product_matters_to_1e_minus_9():
    """Ch. 7 / D9: W_Q -> W_Q G, W_K -> W_K G^{-T} leaves every score unchanged (to 1e-9)."""
    result = checks.check_gauge_invariance(seed=0)
    assert result.passed and result.value < 1e-9


def test_a_wrong_gauge_is_caught():
    result = checks.check_gauge_invariance(seed=0, transform=lambda W_Q, W_K, G: (W_Q @ G, W_K @ G))
    assert not result.passed


@pytest.mark.parametrize("d, d_k", [(8, 3), (16, 4), (6, 6)])
def test_the_bilinear_form_has_rank_at_most_d_k(d, d_k):
    rng = np.random.default_rng(d + d_k)
    W_Q, W_K = rng.normal(size=(d, d_k)), rng.normal(size=(d, d_k))
    assert linalg.rank(W_Q @ W_K.T) == d_k  # random projections reach the bound
    X = rng.normal(size=(5, d))
    np.testing.assert_allclose(attention.bilinear_scores(X, W_Q, W_K, 0.5),
                               0.5 * X @ (W_Q @ W_K.T) @ X.T, atol=1e-10)


@pytest.mark.parametrize("which", ["dV", "dl", "dK", "dq"])
def test_the_four_gradients_match_finite_differences(which):
    """Ch. 7 / D6: each formula against central differences (relative error < 1e-6)."""
    for seed in range(3):
        result = checks.check_attention_gradient(which, seed=seed)
        assert result.passed and result.value < 1e-6, (which, seed, result.value)


def test_a_wrong_logit_gradient_is_caught():
    def wrong(K, V, q, beta, g):
        right = attention.attention_gradients(K, V, q, beta, g)
        return right._replace(dl=right.dl * 1.01)
    assert not checks.check_attention_gradient("dl", gradients=wrong).passed


def test_projection_gradients_are_outer_product_sums_and_match_finite_differences():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5, 4))
    W_Q, W_K, W_V = (rng.normal(size=(4, 3)) for _ in range(3))
    g, beta, t = rng.normal(size=3), 0.6, 4
    grads = attention.projection_gradients(X, W_Q, W_K, W_V, t, beta, g)

    def loss(W_Q, W_K, W_V):
        return g @ attention.attend(X @ W_K, X @ W_V, W_Q.T @ X[t], beta)[0]

    fd = [checks.numerical_gradient(lambda W: loss(W, W_K, W_V), W_Q),
          checks.numerical_gradient(lambda W: loss(W_Q, W, W_V), W_K),
          checks.numerical_gradient(lambda W: loss(W_Q, W_K, W), W_V)]
    for mine, estimate in zip(grads, fd):
        np.testing.assert_allclose(mine, estimate, atol=1e-8)
    # the two sums of outer products written out term by term
    q = W_Q.T @ X[t]
    a = attention.attend(X @ W_K, X @ W_V, q, beta)[1]
    dl = attention.attention_gradients(X @ W_K, X @ W_V, q, beta, g).dl
    np.testing.assert_allclose(grads.dW_V, sum(np.outer(X[i], a[i] * g) for i in range(5)))
    np.testing.assert_allclose(grads.dW_K, sum(beta * dl[i] * np.outer(X[i], q) for i in range(5)))
    assert linalg.rank(grads.dW_K) == 1


def test_projection_gradients_validate_the_reading_token():
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match="t must index a row of X"):
        attention.projection_gradients(X, np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 1)), 3,
                                       1.0, np.ones(1))
    with pytest.raises(ValueError, match="W_K"):
        attention.projection_gradients(X, np.ones((2, 2)), np.ones((3, 2)), np.ones((2, 1)), 0,
                                       1.0, np.ones(1))


def test_logit_gradient_is_the_exact_policy_gradient_with_any_baseline():
    """Ch. 7 / D16: dL/dl = -a (r - rbar) with r = -V g; a constant baseline changes nothing."""
    assert checks.check_policy_gradient(seed=0).value < 1e-12
    rng = np.random.default_rng(5)
    K, V, q, g = rng.normal(size=(6, 3)), rng.normal(size=(6, 2)), rng.normal(size=3), rng.normal(size=2)
    a = attention.attend(K, V, q, 1.3)[1]
    pg = attention.policy_gradient_logits(a, -V @ g)
    np.testing.assert_allclose(attention.policy_gradient_logits(a, -V @ g + 5.0), pg, atol=1e-12)
    # sign reading: raising l_i helps exactly when (v_i - o)^T g < 0
    dl = attention.attention_gradients(K, V, q, 1.3, g).dl
    o = attention.attend(K, V, q, 1.3)[0]
    assert np.array_equal(dl < 0, (V - o) @ g < 0)


def test_training_turns_the_target_key_toward_q_and_the_read_toward_the_target():
    """Ch. 7 figure: key 2 (value 1.0) rotates toward q, a_2 grows, o approaches 1, |k| = 1."""
    data = [key_training.key_training(s) for s in range(key_training.MAX_STEPS + 1)]
    angles = np.array([d["angles"][2] for d in data])
    weights = np.array([d["weights"][2] for d in data])
    outputs = np.array([d["output"] for d in data])
    assert np.all(np.diff(angles) < 0) and angles[0] == pytest.approx(100.0)
    assert np.all(np.diff(weights) > 0) and weights[0] < 0.2 < 0.9 < weights[-1]
    assert np.all(np.diff(np.abs(outputs - 1.0)) < 0) and abs(outputs[-1] - 1.0) < 0.15
    assert data[-1]["angles"][0] > data[0]["angles"][0]  # key 0 (value -1) is pushed away
    for d in data:
        np.testing.assert_allclose(np.linalg.norm(d["keys"], axis=1), 1.0, atol=1e-12)
    with pytest.raises(ValueError, match="steps"):
        key_training.key_training(key_training.MAX_STEPS + 1)


def test_gradient_graph_shows_the_formula_values_of_memkit():
    K, V = attention_gradient_graph.KEYS, key_training.VALUES[:, None]
    q, beta = key_training.QUERY, key_training.BETA
    o, a = attention.attend(K, V, q, beta)
    g = o - 1.0
    grads = attention.attention_gradients(K, V, q, beta, g)
    expected = {"loss": [1.0], "output": g, "weights": V @ g, "logits": grads.dl,
                "keys": grads.dK.ravel(), "query": grads.dq, "values": grads.dV.ravel()}
    for node, values in expected.items():
        data = attention_gradient_graph.gradient_at(node)
        np.testing.assert_allclose(data["values"], values)
        assert len(data["labels"]) == data["values"].size <= attention_gradient_graph.MAX_ENTRIES
    # the backward route of the keys passes through logits, weights and output
    route = attention_gradient_graph.gradient_at("keys")["path"]
    assert [attention_gradient_graph.EDGES[i] for i in route] == [
        ("output", "loss"), ("weights", "output"), ("logits", "weights"), ("keys", "logits")]
    # dL/dl_i = a_i (dL/da_i - a^T dL/da): the logits node follows from the weights node
    da = attention_gradient_graph.gradient_at("weights")["values"]
    np.testing.assert_allclose(attention_gradient_graph.gradient_at("logits")["values"],
                               a * (da - a @ da), atol=1e-12)
    with pytest.raises(ValueError, match="node"):
        attention_gradient_graph.gradient_at("bias")


# --------------------------------------------------------------------------- Chapter 8


def test_heads_add_to_1e_minus_12():
    """Ch. 8 / D18: [H_1 ... H_h] W_O = sum_m H_m W_O^(m), checked to 1e-12 on two heads."""
    result = checks.check_heads_add(seed=0)
    assert result.passed and result.value < 1e-12


def test_heads_add_against_an_independent_computation():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(5, 6))
    W_Q, W_K, W_V, W_O = (rng.normal(size=(6, 6)) for _ in range(4))
    output, terms = attention.multihead(X, W_Q, W_K, W_V, W_O, 3)
    total = np.zeros((5, 6))
    for m in range(3):
        s = slice(2 * m, 2 * m + 2)
        A = attention.attention_matrix(X @ W_Q[:, s], X @ W_K[:, s], 1 / np.sqrt(2))
        total += A @ (X @ W_V[:, s]) @ W_O[s]
    np.testing.assert_allclose(output, total, atol=1e-12)
    np.testing.assert_allclose(terms.sum(axis=0), total, atol=1e-12)


@pytest.mark.parametrize("d", [64, 512, 4096])
def test_attention_holds_4d2_for_any_number_of_heads(d):
    for h in [1, 2, 4, 8, 64]:
        assert costs.attention_params_by_heads(d, h) == 4 * d * d == costs.attention_params(d)
        assert 3 * h * d * (d // h) == 3 * d * d  # D18
    with pytest.raises(ValueError, match="divide"):
        costs.attention_params_by_heads(d, 3)


def test_a_layer_holds_12d2_two_thirds_in_the_mlp():
    for d in [512, 4096]:
        assert costs.mlp_params(d) == 2 * d * 4 * d == 8 * d * d
        assert costs.layer_params(d) == 12 * d * d
        assert Fraction(costs.mlp_params(d), costs.layer_params(d)) == Fraction(2, 3)
    assert costs.layer_params(512) == 3_145_728


def test_original_transformer_mlp_width_is_2048():
    """Ch. 8 (Vaswani et al. 2017): d_ff = 2048 = 4 x 512."""
    assert costs.mlp_params(512) == 2 * 512 * 2048


def test_grouped_query_attention_shrinks_the_cache():
    """Ch. 8 (Llama 3): 8 key-value heads for 32 to 128 query heads."""
    assert costs.kv_cache_fraction(32, 8) == Fraction(1, 4)
    assert costs.kv_cache_fraction(128, 8) == Fraction(1, 16)
    d = 4096
    assert costs.grouped_query_params(d, 32, 32) == 4 * d * d  # multi-head
    assert costs.grouped_query_params(d, 32, 1) == 2 * d * d + 2 * d * 128  # multi-query
    assert costs.grouped_query_params(d, 32, 8) == 2 * d * d + 2 * d * 8 * 128
    with pytest.raises(ValueError, match="kv_heads"):
        costs.grouped_query_params(d, 32, 5)


def _layer(seed=1, d=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(5, d))
    W = [rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(4)]
    W_1, W_2 = rng.normal(size=(d, 4 * d)) / np.sqrt(d), rng.normal(size=(4 * d, d)) / np.sqrt(4 * d)
    return X, W, W_1, W_2


def test_pre_norm_block_adds_two_sublayers_to_the_stream():
    X, W, W_1, W_2 = _layer()
    run = block.transformer_block(X, *W, W_1, W_2, h=2)
    np.testing.assert_allclose(run.x_out, X + run.attn_out + run.mlp_out, atol=1e-12)
    np.testing.assert_allclose(run.attn_out,
                               attention.multihead(block.layer_norm(X), *W, 2, causal=True)[0])
    np.testing.assert_allclose(run.mlp_out,
                               np.maximum(block.layer_norm(run.x_mid) @ W_1, 0) @ W_2)
    # causal: the first position reads only itself
    run_changed = block.transformer_block(np.vstack([X[:1], X[1:] + 1.0]), *W, W_1, W_2, h=2)
    np.testing.assert_allclose(run_changed.x_out[0], run.x_out[0], atol=1e-12)


def test_post_norm_block_normalises_after_the_add():
    X, W, W_1, W_2 = _layer()
    run = block.transformer_block(X, *W, W_1, W_2, h=2, norm="post")
    np.testing.assert_allclose(run.x_mid, block.layer_norm(X + run.attn_out))
    np.testing.assert_allclose(run.x_out.mean(axis=1), 0, atol=1e-12)
    assert np.abs(run.x_out - (X + run.attn_out + run.mlp_out)).max() > 0.1
    with pytest.raises(ValueError, match="norm"):
        block.transformer_block(X, *W, W_1, W_2, h=2, norm="middle")


def test_layer_norm_and_mlp_sublayer():
    X = np.random.default_rng(0).normal(size=(4, 6)) * 3 + 2
    Y = block.layer_norm(X)
    np.testing.assert_allclose(Y.mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(Y.var(axis=1), 1, atol=1e-5)
    with pytest.raises(ValueError, match="W_2"):
        block.mlp_sublayer(X, np.ones((6, 5)), np.ones((4, 6)))


def test_residual_bus_data():
    run = residual_bus._layer()
    for option in residual_bus.OPTIONS:
        data = residual_bus.residual_bus(option)
        np.testing.assert_allclose(data["after"], data["before"] + data["added"])
    whole = residual_bus.residual_bus("whole layer")
    np.testing.assert_allclose(whole["after"], run.x_out[-1], atol=1e-12)
    assert residual_bus.residual_bus("stream only")["added_norm"] == 0.0
    mlp = residual_bus.residual_bus("MLP")
    np.testing.assert_allclose(mlp["before"], residual_bus.residual_bus("attention")["after"])
    with pytest.raises(ValueError, match="sublayer"):
        residual_bus.residual_bus("embedding")


# --------------------------------------------------------------------------- session 6 grading

import json  # noqa: E402
import pathlib  # noqa: E402

SESSION6 = pathlib.Path(__file__).resolve().parents[2] / "solutions" / "session-6"


def _run(name, replace=None):
    """Run a session-6 source notebook in this process, answer cells replaced by ``replace``.

    Returns {grade_id: "ok" or the error} for every code cell, hidden tests included.
    """
    from support.assignment_cells import STUDENT, as_student, fresh_memkit  # a fresh kernel's memkit

    nb = json.loads((SESSION6 / name).read_text())
    namespace, outcome = {"__name__": "__main__"}, {}
    with fresh_memkit(), as_student(STUDENT, SESSION6):  # one student's numbers
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            gid = cell["metadata"]["nbgrader"]["grade_id"]
            source = (replace or {}).get(gid, "".join(cell["source"]))
            try:
                exec(compile(source, gid, "exec"), namespace)  # noqa: S102 - our own notebook
                outcome[gid] = "ok"
            except Exception as exc:  # noqa: BLE001 - a failing test cell is what we look for
                outcome[gid] = f"{type(exc).__name__}: {exc}"
    return outcome


@pytest.mark.parametrize("name", ["exit-test.ipynb", "exercises.ipynb"])
def test_session6_solutions_pass_every_hidden_test(name):
    outcome = _run(name)
    assert all(result == "ok" for result in outcome.values()), outcome


# A submission in which a library routine does the whole job of a write-it-yourself question.
WHOLE_JOB = {
    ("exit-test.ipynb", "q1"): [
        "import memkit.attention as _mk\n"
        "def attention_grads(K, V, q, beta, g):\n"
        "    return tuple(_mk.attention_gradients(K, V, q, beta, g))",
        # fetched at run time, out of sight of a look at the function's names
        "def attention_grads(K, V, q, beta, g):\n"
        "    import importlib\n"
        "    return tuple(importlib.import_module('memkit.attention').attention_gradients(K, V, q, beta, g))",
    ],
    ("exit-test.ipynb", "q2"): [
        "from memkit.checks import numerical_gradient as numerical_grad",
        "def numerical_grad(f, x, h=1e-5):\n"
        "    import importlib\n"
        "    return importlib.import_module('memkit.checks').numerical_gradient(f, x, h)",
        # a one-sided difference is not the asked-for method
        "def numerical_grad(f, x, h=1e-5):\n"
        "    x = np.array(x, dtype=float)\n"
        "    grad = np.zeros_like(x)\n"
        "    for j in np.ndindex(x.shape):\n"
        "        e = np.zeros_like(x)\n"
        "        e[j] = h\n"
        "        grad[j] = (f(x + e) - f(x)) / h\n"
        "    return grad",
    ],
    ("exit-test.ipynb", "q6"): [
        "def count_layer(d, h, kv_heads):\n"
        "    import importlib\n"
        "    c = importlib.import_module('memkit.costs')\n"
        "    return c.grouped_query_params(d, h, kv_heads), c.mlp_params(d)\n"
        "mlp_share = 2 / 3",
    ],
    ("exercises.ipynb", "q1"): [
        "def weight_grads(X, W_Q, W_K, W_V, t, beta, g):\n"
        "    r = attention.projection_gradients(X, W_Q, W_K, W_V, t, beta, g)\n"
        "    return r.dW_K, r.dW_V",
        "from memkit.attention import projection_gradients as _pg\n"
        "def weight_grads(X, W_Q, W_K, W_V, t, beta, g):\n"
        "    r = _pg(X, W_Q, W_K, W_V, t, beta, g)\n"
        "    return r.dW_K, r.dW_V",
    ],
    ("exercises.ipynb", "q4"): [
        "def heads_by_sum(X, W_Q, W_K, W_V, W_O, h):\n"
        "    return attention.multihead(X, W_Q, W_K, W_V, W_O, h, beta=1 / math.sqrt(X.shape[1] // h))\n"
        "h1_vs_h2 = 0.24110154747107296",
    ],
}


@pytest.mark.parametrize("key, cheat", [(k, c) for k, cheats in WHOLE_JOB.items() for c in cheats],
                         ids=lambda v: v[1] if isinstance(v, tuple) else None)
def test_a_library_routine_doing_the_whole_job_loses_the_points(key, cheat):
    name, question = key
    honest = _run(name)
    assert honest[f"{question}-tests"] == "ok"
    outcome = _run(name, {question: cheat})
    assert outcome[question] == "ok", "the cheat itself must run"
    assert outcome[f"{question}-tests"] != "ok", f"{name} {question}: a library routine earned the points"




@pytest.mark.parametrize("name, question, answer", [
    ("exit-test.ipynb", "q5", LIAR_SOURCE + "q5 = _Liar('A')"),
    ("exit-test.ipynb", "q3", LIAR_SOURCE + "q3_wrong = {_Liar('dV')}\nq3_line = _Liar('dV')"),
    ("exercises.ipynb", "q2", "rng = np.random.default_rng(7)\n" + LIAR_SOURCE
     + "smaller = _Liar('no baseline')\nvar_none = var_mean = 0.05\nbias_mean = 0.0"),
])
def test_a_string_with_a_lying_eq_loses_the_points(name, question, answer):
    outcome = _run(name, {question: answer})
    assert outcome[f"{question}-tests"] != "ok"


def test_a_float_with_a_lying_eq_loses_the_points():
    liar = ("class _F(float):\n    def __eq__(self, other):\n        return True\n"
            "    __hash__ = float.__hash__\n    def __sub__(self, other):\n        return 0.0\n"
            "layer_count = total = _F(1.0)\nmlp_share = _F(0.5)")
    assert _run("exercises.ipynb", {"q6": liar})["q6-tests"] != "ok"
