"""The questions of sessions 1-9 grade right.

Run in this process, cell by cell, as a fresh kernel would (``assignment_cells``):

- every solution passes every test, and every visible test says what it checked;
- for each rewritten question, a plausible wrong answer and the number the book prints
  (what a student copying from the chapter would hand in) lose the points;
- in the notebooks whose header forbids memkit, an answer that uses it loses the points of
  its question, for every code question;
- multiple choice (options in an order per student, ``memkit.variants``): across the
  20 ids of the class list no letter is the key of a question for more than half, the keys of each
  student are spread over the letters, a matching key seldom runs in the listed order, no
  question text lists lettered options of its own, and the options of a question have
  similar lengths.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections import Counter

import numpy as np
import pytest

from support import assignment_cells as nbcells

SOURCES = sorted((nbcells.ROOT / "solutions").glob("session-*/*.ipynb"))
IDS = [f"{p.parent.name}/{p.stem}" for p in SOURCES]


def sol(session: str, name: str, gid: str) -> str:
    return nbcells.solution(nbcells.notebook(session, name), gid)


def header(path) -> str:
    return nbcells.cells(path)["header"][1]


# --------------------------------------------------------------------------- every notebook


@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_every_solution_passes_every_test(path):
    results = nbcells.run(path)
    assert results and all(e is None for e in results.values()), {
        k: repr(e) for k, e in results.items() if e is not None
    }


@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_every_visible_test_says_what_it_checked(path):
    """A visible test that passes says it checked the form, not the value."""
    printed: dict = {}
    nbcells.run(path, printed=printed)
    found = nbcells.cells(path)
    for gid, (kind, text) in found.items():
        if kind == "code" and gid.endswith("-tests"):
            assert "print(" in nbcells.visible(text), f"{gid}: its visible part says nothing"
            said = printed[gid].strip().splitlines()[-1]
            assert re.fullmatch(r"\w+: format ok .*graded later", said), (gid, said)


# --------------------------------------------------------------------------- wrong answers

# (session, notebook, answer cell, the answer handed in, what it is). Each loses its points.
S1, S2, S3, S4, S5, S6, S7, S8, S9 = (f"session-{n}" for n in range(1, 10))
EX, EXIT = "exercises", "exit-test"
BOOK_PATTERN = (
    "from memkit import linalg as _l\n"
    "_P = _l.structured_pattern()\n"
    "_mu = np.linalg.svd(_P, compute_uv=False)\n"
    "predicted_errors = measured_errors = np.array([np.sum(_mu[r:] ** 2) for r in range(1, 5)])\n"
)
WRONG = [
    # session 1
    (S1, EXIT, "q4", "rank_counts = rank_options.key(1)", "the old key: 'exactly one' per outer product"),
    (S1, EXIT, "q5", "rank_C = 4\nC_left, C_right = u.T, r", "one rank per term: C has rank 2 or 3"),
    (S1, EX, "q3", BOOK_PATTERN + "r_target = 3", "the book's pattern and its 95 % answer"),
    (S1, EX, "q3", sol(S1, EX, "q3").replace("kept >= energy_target", "kept >= energy_target - 0.01"),
     "the near miss taken for the answer"),
    # session 2
    (S2, EXIT, "q3", sol(S2, EXIT, "q3").replace("predicted_3 = float(np.sqrt((M3 - 1) / d_k3))",
                                                "predicted_3 = 1.0"), "the book's ratio at M = 65, d_k = 64"),
    (S2, EXIT, "q3", sol(S2, EXIT, "q3").replace("M_for_half = int(round(1 + d_k3 * 0.5 ** 2))",
                                                "M_for_half = 17"), "the book's M for half at d_k = 64"),
    (S2, EXIT, "q3", sol(S2, EXIT, "q3").replace("W @ keys[0] - signal", "W @ keys[0]"),
     "the read taken for the interference: the signal not taken out"),
    (S2, EXIT, "q3", sol(S2, EXIT, "q3").replace("np.mean(ratios)", "np.mean(np.square(ratios))"),
     "the mean squared ratio"),
    (S2, EXIT, "q3", sol(S2, EXIT, "q3").split("def ratio_mc")[0]
     + "from memkit import memory as _m\n"
       "def ratio_mc(M, d_k, trials, seed):\n    return _m.hebbian_interference_mc(M, d_k, trials, seed)",
     "memkit's Monte Carlo in place of the student's"),
    (S2, EXIT, "q5", sol(S2, EXIT, "q5").replace("reason_options.key(3)", "reason_options.key(0)"),
     "too few samples taken for the reason"),
    (S2, EXIT, "q5", sol(S2, EXIT, "q5").replace("capacity_5b = d_k5b + 1", "capacity_5b = 2 * d_k5b"),
     "the least-squares capacity"),
    (S2, EXIT, "q5", sol(S2, EXIT, "q5").replace("max_pairs = int(1 + d_k5 * ratio_max ** 2 + 1e-9)",
                                                "max_pairs = 9"), "the book's 9 pairs at d_k = 32"),
    (S2, EX, "q1", sol(S2, EX, "q1").replace("predicted = 1 / dims1", "predicted = 1 / np.array([4, 16, 64])"),
     "the book's three dimensions"),
    (S2, EX, "q1", sol(S2, EX, "q1").replace("d_for_target = int(np.ceil(1 / typical_target ** 2 - 1e-9))",
                                            "d_for_target = 100"), "the old target of 0.1"),
    (S2, EX, "q2", sol(S2, EX, "q2").replace("M_same_ratio = int(round(1 + d_k2b * (Ms2[1] - 1) / d_k2))",
                                            "M_same_ratio = 2 * int(Ms2[1])"), "M doubled, not M - 1"),
    (S2, EX, "q2", sol(S2, EX, "q2").replace("predicted = np.sqrt((Ms2 - 1) / d_k2)",
                                            "predicted = np.sqrt(Ms2 / d_k2)"), "M in place of M - 1"),
    # session 3
    (S3, EXIT, "q1", "normal_equations = equation_options.key(0)", "the old key: zero residual"),
    (S3, EXIT, "q4", "delta_corrects = delta_options.key(1)", "the old key, now the least-squares write"),
    (S3, EXIT, "q3", sol(S3, EXIT, "q3").replace("ratio_store = float(", "ratio_store = 1.4496035784027992 + 0 * float("),
     "the old Monte Carlo value"),
    (S3, EXIT, "q3", sol(S3, EXIT, "q3").replace("np.linalg.norm(signal, axis=1)))",
                                                "np.linalg.norm(V, axis=1)))"), "the signal taken as v_j"),
    (S3, EX, "q1", sol(S3, EX, "q1").replace("hebbian_predicted = float(np.sqrt((M1 - 1) / d_k1))",
                                            "hebbian_predicted = 1.39").replace(
        "ls_predicted = float(np.sqrt(M1 / d_k1 - 1))", "ls_predicted = 1.0"), "the book's numbers at d_k = 16, M = 32"),
    (S3, EX, "q1", sol(S3, EX, "q1").replace("side_options.key(0)", "side_options.key(1)"),
     "above: Jensen's inequality the wrong way round"),
    (S3, EX, "q4", sol(S3, EX, "q4").replace("np.max(np.linalg.norm", "np.mean(np.linalg.norm"),
     "the mean error, where every value must be within 1 %"),
    # session 4
    (S4, EXIT, "q2", sol(S4, EXIT, "q2").replace("m2 = 1 / d2\nm4 = 3 / (d2 * (d2 + 2))",
                                                "m2 = 1 / 32\nm4 = 3 / 1088"), "the book's moments at d = 32"),
    (S4, EXIT, "q2", sol(S4, EXIT, "q2").replace("m4 = 3 / (d2 * (d2 + 2))", "m4 = 3 / d2 ** 2"),
     "the Gaussian's fourth moment"),
    (S4, EXIT, "q4", "why_square = square_options.key(1)", "the old key"),
    (S4, EXIT, "q5", sol(S4, EXIT, "q5").replace("int(np.ceil((facts5 * 15 / 2) ** (1 / 3)))",
                                                "int((facts5 * 15 / 2) ** (1 / 3))"), "rounded down"),
    (S4, EX, "q1", sol(S4, EX, "q1").replace("asymptotic = 2 / 3 * d1 ** 2", "asymptotic = 2730.6666666666665")
     .replace("exact = 2 / (3 / (d1 * (d1 + 2)))", "exact = 2816.0"), "the book's capacities at d = 64"),
    (S4, EX, "q1", sol(S4, EX, "q1").replace("larger_options.key(0)", "larger_options.key(1)"),
     "the ReLU's half taken for the correction"),
    (S4, EX, "q2", sol(S4, EX, "q2").replace("below_gaussian = float(exact_moments[1] / (3 / d_moments ** 2))",
                                            "below_gaussian = (d_moments + 2) / d_moments"), "the ratio upside down"),
    (S4, EX, "q4", sol(S4, EX, "q4").replace("np.maximum(np.asarray(s, dtype=float), 0.0) ** 2",
                                            "np.maximum(np.asarray(s, dtype=float), 0.0)"), "the gate of the square"),
    (S4, EX, "q4", sol(S4, EX, "q4").replace("np.maximum(np.asarray(s, dtype=float), 0.0) ** 2",
                                            "scores.relu_power(s, 2)"), "memkit's squared ReLU for the gate"),
    (S4, EX, "q5", sol(S4, EX, "q5").replace("predicted = np.sqrt((M5 - 1) * np.array([1 / d5, 3 / (d5 * (d5 + 2))]) / 2)",
                                            "predicted = np.array([1.763, 0.524])"), "the book's predictions at d = 32, M = 200"),
    # session 5
    (S5, EXIT, "q3", "ratio_13 = 1e8", "the old answer, from the book's similarities"),
    (S5, EXIT, "q3", "ratio_13 = 15.0", "a ratio linear in the similarity gap"),
    (S5, EXIT, "q4", "jac_norms = np.array([0.435, 1.65, 1.21, 3.53e-4])\nbest_beta = 4.0",
     "the book's cell: s = (1, 0.8, 0.5, 0), beta = 1, 4, 16, 64"),
    (S5, EXIT, "q5", "q5 = trade_options.key(0)", "a larger beta lowers the capacity"),
    (S5, EXIT, "q6", sol(S5, EXIT, "q6").replace("trend_options.key(3)", "trend_options.key(0)"),
     "the Gaussian formula's fall past d/2, the trap"),
    (S5, EXIT, "q6", sol(S5, EXIT, "q6") + "\nmoment_mc, moment_gauss, cap_sphere = 6.185, 7.389, 483.0",
     "the book's d = 16, beta = 4"),
    (S5, EXIT, "q7", "bandwidth = 1 / math.sqrt(beta7)\nratio_dist = math.exp(beta7 * (dist7[1] - dist7[0]) / 2)",
     "distances, not squared distances"),
    (S5, EX, "q4", sol(S5, EX, "q4").replace("closer_options.key(0)", "closer_options.key(3)"),
     "the formula taken for the fit"),
    (S5, EX, "q4", sol(S5, EX, "q4").replace("mc_ratio = float(ratios4.mean())",
                                            "mc_ratio = float(capacity.softmax_ratio_exact(M4, d4, beta_mc4))"),
     "the prediction handed in as the measurement"),
    # session 6
    (S6, EXIT, "q5", "q5 = head_options.key(2)", "the old key, now one row of the attention matrix"),
    # session 7
    (S7, EXIT, "q6", "cache_bytes_per_token, weight_bytes, n_star = 524288.0, 12884901888.0, 24576.0\n"
                     "n_star_shared = 24576.0", "the book's model, d = 4096, L = 32"),
    (S7, EXIT, "q6", sol(S7, EXIT, "q6").replace("n_star / batch6 * (heads6 / kv_heads6)", "n_star / batch6 / (heads6 / kv_heads6)"),
     "sharing heads taken to shorten the crossing"),
    (S7, EXIT, "q7", "n_star_ex4, n_star_ex4_half, n_star_ex4_batch = 49152.0, 49152.0, 6144.0",
     "the book's Exercise 4"),
    (S7, EXIT, "q7", sol(S7, EXIT, "q7").replace(
        "n_star_ex4_half = (4 * d7 ** 2 + 3 * d7 * ff7) * (L7 // 2) / (2 * d7 * (L7 // 2))",
        "n_star_ex4_half = n_star_ex4 / 2"), "half the layers, half the crossing"),
    (S7, EX, "q2", sol(S7, EX, "q2").replace("n_exact = costs.orthogonal_bound(d_k_bound2)", "n_exact = 64"),
     "the book's bound in R^64"),
    (S7, EX, "q2", sol(S7, EX, "q2").replace('"add") @ K2[0] - V2[0])', '"add") @ K2[t - 1] - V2[t - 1])'),
     "the newest key read, not the first"),
    (S7, EX, "q3", sol(S7, EX, "q3").replace("newest_factor = 1 - betas3[1]", "newest_factor = betas3[1]"),
     "beta, not 1 - beta"),
    (S7, EX, "q3", sol(S7, EX, "q3").replace('exact_newest = {"delta"}', 'exact_newest = {"delta", "decay"}'),
     "the decay taken to write exactly"),
    (S7, EX, "q4", sol(S7, EX, "q4").replace("gradient = np.outer(S4 @ k4 - v4, k4)",
                                            "gradient = np.outer(S4 @ k4 - v4, k4) * 2"),
     "a factor 2 from the square"),
    (S7, EX, "q5", sol(S7, EX, "q5").replace("best_change = change_options.key(best)",
                                            "best_change = change_options.key(2)"), "the 8-bit cache"),
    (S7, EX, "q5", sol(S7, EX, "q5").replace("n_star_best = moved[best]", "n_star_best = 393216.0"),
     "the old crossing of the Exercise 4 model"),
    # session 8
    (S8, EXIT, "q2", "y_one_layer, y_least_squares, eta_exact, eta_limit = 0.8, 4 / 3, 1 / 6, 1 / 3",
     "the book's Exercise 5"),
    (S8, EXIT, "q3", sol(S8, EXIT, "q3").replace("pred_examples = pred_examples + eta * (X @ X.T) @ residuals",
                                                "pass"), "the examples' predictions never updated"),
    (S8, EXIT, "q3", "def layer_predictions(X, Y, x_q, eta, layers):\n"
                     "    W, out = np.zeros((Y.shape[1], X.shape[1])), []\n"
                     "    for _ in range(layers):\n"
                     "        W = W - eta * (X @ W.T - Y).T @ X\n"
                     "        out.append(W @ x_q)\n"
                     "    return np.array(out)", "plain gradient descent on W, no tokens"),
    (S8, EXIT, "q4", 'wrong_line = "C"\ny_two_layers, y_two_flawed = 1.12, -2.08', "the book's pairs"),
    (S8, EXIT, "q6", 'my_rows = {"delta_rule": {"state": "d", "write": "e", "read": "a"},\n'
                     '           "softmax_attention": {"state": "c", "write": "b", "read": "c"}}',
     "the old table's letters, in the listed order"),
    (S8, EXIT, "q7", 'q7 = "A"\nstate_numbers, state_numbers_sym, n_equal = 4096, 4096, 128.0',
     "the old answer at d_k = 16, the symmetric state missed"),
    (S8, EXIT, "q7", sol(S8, EXIT, "q7").replace("state_numbers_sym = d7 * d7 * (d7 + 1) // 2",
                                                "state_numbers_sym = d7 * d7 ** 2 // 2"), "half the entries"),
    (S8, EX, "q1", "eta_limit = 1 / 3\nconverges = {0.12: True, 0.16: True}\npred_20 = {0.12: 1.318, 0.16: -1114.2}",
     "the book's pairs and thresholds"),
    (S8, EX, "q4", sol(S8, EX, "q4").replace("eta_match = float(n)", "eta_match = 1.0"),
     "the book's step on the summed loss"),
    (S8, EX, "q5", sol(S8, EX, "q5").replace("state_work = costs.state_work(n5b, width_b, width_b)",
                                            "state_work = 67108864"), "the book's 6.7e7, printed for another model"),
    (S8, EX, "q5", sol(S8, EX, "q5").replace("reading = reading_options.key(int(np.argmin([abs(c - 6.7e7) for c in candidates])))",
                                            "reading = reading_options.key(1)"),
     "a state of d^2 numbers counted in 32-bit bytes"),
    (S8, EX, "q6", sol(S8, EX, "q6").replace("cheaper = cheaper_options.key(1)", 'cheaper = "whitened"'),
     "the old answer, a word"),
    (S8, EX, "q6", sol(S8, EX, "q6").replace("cheaper = cheaper_options.key(1)", "cheaper = cheaper_options.key(0)"),
     "the smallest Frobenius norm"),
    # session 9
    (S9, EXIT, "q2", 'q2 = {"mlp": ("a", "a", "b"), "softmax_attention": ("b", "b", "c"), '
                     '"linear_attention": ("c", "c", "a"), "decay": ("c", "d", "a"), '
                     '"delta_rule": ("c", "e", "a"), "test_time_training": ("d", "f", "d")}',
     "the old letters, in the listed order"),
    (S9, EXIT, "q4", 'q4 = {"nadaraya_watson": "a", "widrow_hoff": "b", "recursive_least_squares": "c", '
                     '"hash_table": "d", "fast_weight_programmer": "e", "reinforce": "f", '
                     '"random_features": "g", "hopfield_network": "h"}', "a to h in the listed order"),
    (S9, EXIT, "q5", "hebbian_ratio_ex1, ls_ratio_ex1, M_hebbian_one, M_ls_one = 1.39, 1.0, 17, 32",
     "the book's Exercise 1"),
    (S9, EXIT, "q7", "relu2_asymptotic, relu2_exact, d_one_percent = 2730.67, 2816.0, 201",
     "the book's Exercise 3"),
    (S9, EXIT, "q8", 'capacities = {"hebbian": 64, "least_squares": 128, "relu": 128, "relu2": 2730.67, '
                     '"relu3": 34952.5, "softmax": 1202604.3}', "the book's table at d = 64, beta = 8"),
    (S9, EXIT, "q8", sol(S9, EXIT, "q8").replace('"least_squares": 2 * d8', '"least_squares": d8 + 1'),
     "the Hebbian capacity for least squares"),
    (S9, EXIT, "q9", "n_star_gqa, n_star_gqa_batch = 98304.0, 24576.0", "the book's model"),
    (S9, EXIT, "q10", "shrink, layers_1pct = 0.4, 6", "the book's pairs"),
    (S9, EX, "q1", sol(S9, EX, "q1").replace('"hebbian": next(M for M in M_GRID if (M - 1) / d_k1 >= 1)',
                                            '"hebbian": next(M for M in M_GRID if M / d_k1 >= 1)'),
     "ratio one at M = d_k"),
    (S9, EX, "q1", sol(S9, EX, "q1") + "\nseed_q1 = seed_q1 + 1", "a seed other than the run's"),
    (S9, EX, "q2", "relu2_asymptotic_d2, relu2_exact_d2, relu2_measured_d2 = 170.67, 192.0, 214\n"
                   "trials_q2, seed_q2 = 64, 0\ncloser = formula_options.key(1)", "the book's width 16"),
    (S9, EX, "q2", sol(S9, EX, "q2") + "\ntrials_q2 = trials_q2 * 2", "a number of trials other than the run's"),
    (S9, EX, "q2", sol(S9, EX, "q2").replace("formula_options.key(1)", "formula_options.key(0)"), "the large-d form"),
    (S9, EX, "q3", sol(S9, EX, "q3").replace("rls_options.key(3)", "rls_options.key(0)"), "the ridge penalty alone"),
    (S9, EX, "q3", sol(S9, EX, "q3").replace("same = {name for name, gap in gaps.items() if gap < 1e-9}",
                                            "same = set(gaps) - {'hash_table'}"), "RLS taken for the delta rule"),
    (S9, EX, "q4", 'sizes = {"softmax_cache": 128000, "linear_attention": 4096, '
                   '"linear_attention_normalised": 4160, "polynomial2": 262144}\nn_cache_beats_poly2 = 2049',
     "the old sizes at d = 64"),
]


@pytest.mark.parametrize("session,name,gid,answer,why", WRONG,
                         ids=[f"{s}-{n}-{g}-{w[:40]}" for s, n, g, _, w in WRONG])
def test_a_wrong_or_copied_answer_loses_the_points(session, name, gid, answer, why):
    assert answer.strip() != sol(session, name, gid).strip(), "the variant must differ from the solution"
    results = nbcells.run(nbcells.notebook(session, name), {gid: answer})
    assert isinstance(results[f"{gid}-tests"], AssertionError), (why, results[f"{gid}-tests"])
    others = {k: e for k, e in results.items() if k != f"{gid}-tests" and e is not None}
    assert not others, others


# --------------------------------------------------------------------------- memkit not allowed

FORBIDS = [p for p in SOURCES if "memkit is not allowed in this notebook" in header(p)]
CODE_QUESTIONS = [
    (path, gid)
    for path in FORBIDS
    for gid, (kind, text) in nbcells.cells(path).items()
    if kind == "code" and f"{gid}-tests" in nbcells.cells(path)
]


def test_every_exit_test_of_sessions_5_to_9_forbids_memkit():
    assert {p.parent.name for p in FORBIDS if p.stem == EXIT} >= {f"session-{n}" for n in range(5, 10)}


@pytest.mark.parametrize("path,gid", CODE_QUESTIONS,
                         ids=[f"{p.parent.name}/{p.stem}-{g}" for p, g in CODE_QUESTIONS])
def test_an_answer_that_imports_memkit_loses_the_points(path, gid):
    """What the notebook's header says (no memkit) holds for every code question."""
    answer = "from memkit import capacity as _capacity\n" + nbcells.solution(path, gid)
    results = nbcells.run(path, {gid: answer})
    assert isinstance(results[f"{gid}-tests"], AssertionError)
    assert "memkit is not allowed" in str(results[f"{gid}-tests"])
    order = list(results)
    before = order[: order.index(f"{gid}-tests")]
    assert all(results[k] is None for k in before), "the questions before it keep their points"


FUNCTION_QUESTIONS = [
    (path, gid, node.name)
    for path, gid in CODE_QUESTIONS
    for node in ast.parse(nbcells.solution(path, gid)).body
    if isinstance(node, ast.FunctionDef) and f"{node.name}(" in nbcells.cells(path)[f"{gid}-tests"][1]
]


@pytest.mark.parametrize("path,gid,function", FUNCTION_QUESTIONS,
                         ids=[f"{p.parent.name}/{p.stem}-{g}-{f}" for p, g, f in FUNCTION_QUESTIONS])
def test_a_function_that_imports_memkit_when_called_loses_the_points(path, gid, function):
    """memkit fetched inside the function, out of sight until a test calls it."""
    answer = nbcells.solution(path, gid) + (
        f"\n_honest = {function}\n"
        f"def {function}(*args, **kwargs):\n"
        "    import importlib\n"
        "    importlib.import_module('memkit.' + 'attention')\n"
        "    return _honest(*args, **kwargs)\n"
    )
    results = nbcells.run(path, {gid: answer})
    assert isinstance(results[f"{gid}-tests"], AssertionError)
    assert "memkit is not allowed" in str(results[f"{gid}-tests"])


# memkit helpers doing a question's work, those a student would reach for and more: each
# answer computes the right value
HELPERS = [
    (S5, "q4", "from memkit import attention\n"
               "jac_norms = np.array([np.linalg.norm(b * attention.softmax_jacobian(b * s4)) for b in betas4])\n"
               "best_beta = betas4[int(np.argmax(jac_norms))]"),
    (S5, "q6", "from memkit import capacity\n"
               "_g = np.random.default_rng(6).standard_normal((100_000, d6))\n"
               "s6_draws = _g[:, 0] / np.linalg.norm(_g, axis=1)\n"
               "moment_mc = float(np.mean(np.exp(2 * beta6 * s6_draws)))\n"
               "moment_gauss = capacity.softmax_moment_gaussian(d6, beta6)\n"
               "cap_sphere = 1 + math.exp(2 * beta6) / moment_mc\nq6_trend = trend_options.key(3)"),
    (S5, "q1", "import memkit.attention as mk_attention\n"
               "def soft_read(K, V, q, beta):\n    return mk_attention.attend(K, V, q, beta)"),
    (S6, "q6", "from memkit import costs\n"
               "def count_layer(d, h, kv_heads):\n"
               "    return costs.grouped_query_params(d, h, kv_heads), costs.mlp_params(d)\n"
               "mlp_share = costs.mlp_params(480) / sum((costs.grouped_query_params(480, heads6, kv_heads6), "
               "costs.mlp_params(480)))"),
    (S7, "q4", "from memkit import recurrent\n"
               "recall_errors = np.array([np.linalg.norm(recurrent.run_updates(np.array([k for k, _ in stream]), "
               "np.array([v for _, v in stream]), rule, **p) @ keys[0] - v1_new) for rule, p in "
               "(('add', {}), ('decay', {'gamma': gamma4}), ('delta', {'beta': 1.0}))])"),
    (S7, "q6", "import importlib\n_costs = importlib.import_module('memkit.costs')\n"
               "cache_bytes_per_token = _costs.cache_bytes(1, d6, L6, bytes6)\n"
               "weight_bytes = L6 * bytes6 * (4 * d6 ** 2 + _costs.mlp_params(d6, ff6))\n"
               "n_star = weight_bytes / cache_bytes_per_token\nn_star_shared = n_star / batch6 * heads6 / kv_heads6"),
    (S9, "q8", "from memkit import capacity\ncapacities = capacity.capacity_table(d8, beta8)"),
]


@pytest.mark.parametrize("session,gid,answer", HELPERS, ids=[f"{s}-{g}" for s, g, _ in HELPERS])
def test_the_right_value_from_a_memkit_helper_loses_the_points(session, gid, answer):
    path = nbcells.notebook(session, EXIT)
    results = nbcells.run(path, {gid: answer})
    assert isinstance(results[f"{gid}-tests"], AssertionError), results[f"{gid}-tests"]
    assert "memkit is not allowed" in str(results[f"{gid}-tests"])


def test_the_helpers_do_compute_the_right_values():
    # without the memkit check, each helper answer would have earned the points: the check is
    # what takes them away
    for session, gid, answer in HELPERS:
        path = nbcells.notebook(session, EXIT)
        found = nbcells.cells(path)
        namespace: dict = {}
        nbcells.run(path, {gid: answer}, namespace=namespace)
        namespace["_memkit_unused"] = lambda: True
        with nbcells.as_student(nbcells.STUDENT, path.parent):
            exec(compile(nbcells.code(found[f"{gid}-tests"][1]), gid, "exec"), namespace)


# --------------------------------------------------------------------------- multiple choice

OPTION = re.compile(r"^(\s*)- (?:\*\*)?([A-Ha-h])[.:](?:\*\*)?\s+(.*)$")


def option_lists(text: str) -> list[dict[str, str]]:
    """The lettered option lists of a question's text, each {letter: text}, in order."""
    lists, current, indent, last = [], {}, None, None
    for line in text.splitlines():
        m = OPTION.match(line)
        if m and (indent is None or len(m.group(1)) == indent):
            indent, last = len(m.group(1)), m.group(2)
            current[last] = m.group(3)
        elif current and line.strip() and len(line) - len(line.lstrip()) > indent and not line.lstrip().startswith("- "):
            current[last] += " " + line.strip()
        elif current:
            lists.append(current)
            current, indent = {}, None
    if current:
        lists.append(current)
    return [opts for opts in lists if len(opts) >= 2]


def rendered(option: str) -> str:
    """An option's text roughly as read: markup and LaTeX commands out."""
    text = re.sub(r"\\[A-Za-z]+", "x", option)
    text = re.sub(r"[$*`{}^_\\]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def answer_names(source: str) -> list[str]:
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                names += [t.id for t in ast.walk(target) if isinstance(t, ast.Name)]
    return names


def letters_of(value, letters: set[str]):
    """The letters an answer value holds, shaped like it; None if it is not made of letters."""
    if isinstance(value, str):
        return value if value in letters else None
    if isinstance(value, dict):
        inner = {k: letters_of(v, letters) for k, v in value.items()}
        return inner if inner and all(v is not None for v in inner.values()) else None
    if isinstance(value, (tuple, list, set, frozenset)):
        inner = [letters_of(v, letters) for v in value]
        return type(value)(inner) if inner and all(v is not None for v in inner) else None
    return None


IDS20 = nbcells.RANDOM_IDS  # the 20 random ids of the class the tests grade


def multiple_choice(student: str = nbcells.STUDENT):
    """Every question with options drawn per student (``numbers.options``):
    (notebook, question, its text, its ``Options`` lists, its keys for ``student``).

    A key is a letter, a set of letters, a dict from the names of the question to letters
    (or to tuples of letters, one per list). A question whose test holds the full table in
    ``_table`` (the student picks its rows) is judged on that table.
    """
    found = []
    for path in SOURCES:
        cells = nbcells.cells(path)
        run = nbcells.solved(path, student)
        namespace = run.values
        drawn: dict = {}
        for label, options in run.numbers.choices.items():
            drawn.setdefault(re.match(r"q\d+", label).group(0), []).append(options)
        for qid, lists in drawn.items():
            letters = set().union(*(set(o.letters) for o in lists))
            keys = {}
            for name in answer_names(nbcells.solution(path, qid)):
                held = letters_of(namespace.get(name), letters)
                if held is not None:
                    keys[name] = held
            table = re.search(r"^_table = ", cells.get(f"{qid}-tests", ("", ""))[1], re.M)
            if table:
                keys = {"_table": {k: tuple(v) for k, v in namespace["_table"].items()}}
            found.append((f"{path.parent.name}/{path.stem}", qid, cells[f"{qid}-text"][1], lists, keys))
    return found


MC = multiple_choice()


@functools.cache
def mc20() -> dict:
    """``multiple_choice`` of each of the 20 ids (360 runs of the solutions: made once, by the
    first test that needs it, not when the module is collected)."""
    return {student: multiple_choice(student) for student in IDS20}


def single_keys(mc=MC):
    return [(nb, q, key) for nb, q, _, lists, keys in mc for key in keys.values()
            if isinstance(key, str) and len(lists[-1].texts) >= 3]


def in_listed_order(sequence) -> bool:
    seq = [s.lower() for s in sequence]
    return len(seq) >= 3 and all(a <= b for a, b in zip(seq, seq[1:]))


def key_sequences(text: str, key: dict) -> list[list[str]]:
    """A matching key's letters in the order its names appear in the question, per column."""
    order = sorted(key, key=lambda name: (text.find(f'"{name}"') % (len(text) + 1), name))
    first = key[order[0]]
    if isinstance(first, tuple):
        return [[key[name][c] for name in order] for c in range(len(first))]
    return [[key[name] for name in order]]


def single_answers(mc) -> dict:
    """{(notebook, question, name): (letter, options)} for every key that is one letter: the
    key of a question with one right option, or one entry of a matching question, with the
    number of options it was drawn among."""
    found = {}
    for nb, qid, _, lists, keys in mc:
        for name, key in keys.items():
            if isinstance(key, str) and len(lists[-1].texts) >= 3:
                found[(nb, qid, name)] = (key, len(lists[-1].texts))
            elif isinstance(key, dict):
                for entry, letters in key.items():
                    for column, letter in enumerate(letters if isinstance(letters, tuple) else (letters,)):
                        drawn_among = len(lists[min(column, len(lists) - 1)].texts)
                        found[(nb, qid, f"{name}[{entry!r}][{column}]")] = (letter, drawn_among)
    return found


def test_the_course_has_its_multiple_choice_questions():
    assert len(single_keys()) >= 15
    assert sum(isinstance(k, dict) for *_, keys in MC for k in keys.values()) >= 5


def test_every_lettered_option_list_is_drawn_per_student():
    """No question text lists lettered options (they would come in one order and with one
    key for the whole class); each lives in a locked options cell. (The lettered lines of a
    derivation whose wrong line is asked for are not options.)"""
    for path in SOURCES:
        for gid, (kind, text) in nbcells.cells(path).items():
            if kind == "markdown" and gid.endswith("-text") and "the line that is wrong" not in text:
                assert option_lists(text) == [], (path.parent.name, path.stem, gid)


def test_across_20_ids_no_letter_is_the_key_for_more_than_half():
    """The 20 ids of the class, on its class list (seats 1 to 20), see each
    question's options in the rows of their blocks' Latin squares (``memkit.variants``): for
    every lettered answer (one right option, or one entry of a matching question), no letter
    is the key of more than half of them, nor of more than ceil(20 / k) for k options."""
    every = [single_answers(mc20()[student]) for student in IDS20]
    assert len(every[0]) >= 40 and all(student in nbcells.SEATS for student in IDS20)
    n = len(IDS20)
    for where, (_, k) in every[0].items():
        counts = Counter(answers[where][0].lower() for answers in every)
        assert max(counts.values()) <= min(n / 2, math.ceil(n / k)), (where, dict(counts))
        assert len(counts) >= min(k, 3), (where, dict(counts))


@pytest.mark.parametrize("nb,qid,text,lists,keys", MC, ids=[f"{m[0]}-{m[1]}" for m in MC])
def test_a_matching_key_seldom_runs_in_the_listed_order(nb, qid, text, lists, keys):
    """Shuffled per student, a matching key (session 9 Q4's, say) runs in the listed order
    (a, b, c, ...) for few of the 20 ids (one in 4! for 4 names)."""
    for name, key in keys.items():
        if isinstance(key, dict) and len(key) >= 3:
            keys20 = [next(k for q in mc20()[s] if (q[0], q[1]) == (nb, qid) for n, k in q[4].items() if n == name)
                      for s in IDS20]
            ordered = sum(any(in_listed_order(seq) for seq in key_sequences(text, k)) for k in keys20)
            assert ordered <= 0.2 * len(IDS20), (nb, qid, ordered)


@pytest.mark.parametrize("nb,qid,text,lists,keys", MC, ids=[f"{m[0]}-{m[1]}" for m in MC])
def test_the_options_of_a_question_have_similar_lengths(nb, qid, text, lists, keys):
    """One developed option among absurd ones would give the key away: a question's options
    have similar lengths, the longest at most 2.5 times the shortest.

    (Not the lists of a matching question, whose every entry is the key of some name.)"""
    if not any(isinstance(k, (str, set, frozenset, list)) for k in keys.values()):
        return
    for options in lists:
        if len(options.texts) < 3:
            continue
        lengths = [len(rendered(o)) for o in options.texts]
        assert max(lengths) <= 2.5 * min(lengths), (nb, qid, dict(zip(options.letters, lengths)))


def test_the_checks_catch_what_the_issues_found():
    # the old session 9 Q4 (a to h in order), session 9 Q2's write column (a to f), a run
    # that only nearly follows the list (a, b, c, c, c, d), and one developed option
    assert in_listed_order(list("abcdefgh")) and in_listed_order(list("abcccd"))
    assert not in_listed_order(list("edafbc"))
    old_s9_q2 = {"mlp": ("a", "a", "b"), "softmax_attention": ("b", "b", "c"),
                 "linear_attention": ("c", "c", "a"), "decay": ("c", "d", "a"),
                 "delta_rule": ("c", "e", "a"), "test_time_training": ("d", "f", "d")}
    text = " ".join(f'"{n}"' for n in old_s9_q2)
    assert any(in_listed_order(s) for s in key_sequences(text, old_s9_q2))
    old_s1_q4 = {"a": "The number of nonzero entries of the matrix.",
                 "b": "The fewest outer products that add up to the matrix (equivalently, the number "
                      "of linearly independent columns).",
                 "c": "The number of rows of the matrix.", "d": "The size of its largest singular value."}
    lengths = [len(rendered(o)) for o in old_s1_q4.values()]
    assert max(lengths) > 2.5 * min(lengths)
    old_keys = [("s1", "q4", "b"), ("s2", "q4", "a"), ("s3", "q1", "a"), ("s3", "q4", "b"), ("s4", "q4", "b")]
    counts = Counter(k for *_, k in old_keys)
    assert max(counts.values()) > 0.4 * len(old_keys)


def test_the_option_parser_reads_every_list():
    text = "Which?\n\n- **a.** one\n  more\n- **b.** two\n- **c.** three\n\n*Write*\n\n- a: x\n- b: y\n"
    assert option_lists(text) == [{"a": "one more", "b": "two", "c": "three"}, {"a": "x", "b": "y"}]
    assert np.isclose(len(rendered(r"$\operatorname{softmax}(\beta s)$")), len("xsoftmax(x s)"))
