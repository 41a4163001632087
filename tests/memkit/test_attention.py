"""Tests of memkit.attention (Chapters 6-8)."""

import itertools

import numpy as np
import pytest

from memkit import attention as att
from memkit.checks import numerical_gradient


@pytest.fixture
def store():
    rng = np.random.default_rng(7)
    return rng.standard_normal((6, 4)), rng.standard_normal((6, 3)), rng.standard_normal(4)


def test_softmax_sums_to_one_and_is_stable():
    a = att.softmax([1000.0, 999.0, -1000.0])
    assert np.isclose(a.sum(), 1.0)
    assert np.allclose(a[:2], np.exp([1.0, 0.0]) / (np.e + 1.0))
    rows = att.softmax([[1.0, 2.0], [3.0, 3.0]])
    assert np.allclose(rows.sum(axis=1), 1.0)
    assert np.allclose(rows[1], 0.5)
    cols = att.softmax([[1.0, 2.0], [3.0, 3.0]], axis=0)
    assert np.allclose(cols.sum(axis=0), 1.0)


def test_softmax_rejects_bad_input():
    with pytest.raises(ValueError, match="l must be"):
        att.softmax(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="axis"):
        att.softmax([1.0, 2.0], axis=1)
    with pytest.raises(ValueError, match="l contains NaN"):
        att.softmax([1.0, np.nan])


def test_attend_is_a_weighted_average(store):
    K, V, q = store
    o, a = att.attend(K, V, q, beta=2.0)
    assert np.allclose(a, att.softmax(2.0 * K @ q))
    assert np.allclose(o, sum(a_i * v_i for a_i, v_i in zip(a, V)))
    s = K @ q  # a weight ratio is e^{beta (s_i - s_j)}
    assert np.isclose(a[0] / a[1], np.exp(2.0 * (s[0] - s[1])))


def test_temperature_limits(store):
    K, V, q = store
    o0, a0 = att.attend(K, V, q, beta=0)
    assert np.allclose(a0, 1 / 6) and np.allclose(o0, V.mean(axis=0))
    o_hard = att.hard_lookup(K, V, q)
    assert np.allclose(o_hard, V[np.argmax(K @ q)])
    assert np.allclose(att.attend(K, V, q, beta=1e4)[0], o_hard)


def test_attend_names_the_wrong_argument(store):
    K, V, q = store
    with pytest.raises(ValueError, match="K and V"):
        att.attend(K, V[:4], q, 1.0)
    with pytest.raises(ValueError, match="q must have length 4"):
        att.attend(K, V, q[:3], 1.0)
    with pytest.raises(ValueError, match="K must be a matrix"):
        att.attend(q, V, q, 1.0)
    with pytest.raises(ValueError, match="beta"):
        att.attend(K, V, q, -1.0)


def test_attention_matrix_rows_and_causal_mask():
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    A = att.attention_matrix(Q, K, 1.0)
    assert A.shape == (5, 5) and np.allclose(A.sum(axis=1), 1.0)
    C = att.attention_matrix(Q, K, 1.0, causal=True)
    assert np.allclose(np.triu(C, k=1), 0.0) and np.allclose(C.sum(axis=1), 1.0)
    O = att.attention(Q, K, V, 1.0, causal=True)
    for t in range(5):  # causal row t = one soft read of the first t + 1 pairs
        assert np.allclose(O[t], att.attend(K[: t + 1], V[: t + 1], Q[t], 1.0)[0])
    with pytest.raises(ValueError, match="Q has 2 rows"):
        att.attention_matrix(Q[:2], K, 1.0, causal=True)
    with pytest.raises(ValueError, match="Q must have shape"):
        att.attention_matrix(Q[:, :2], K, 1.0)


def test_softmax_lifts_rank_chapter6():
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((10, 2)), rng.standard_normal((10, 2))
    assert np.linalg.matrix_rank(Q @ K.T) == 2
    assert np.linalg.matrix_rank(att.attention_matrix(Q, K, 1.0)) == 10


def test_attention_gradients_shapes_and_identities(store):
    K, V, q = store
    g = np.array([0.5, -1.0, 2.0])
    grads = att.attention_gradients(K, V, q, 1.5, g)
    a = att.attend(K, V, q, 1.5)[1]
    assert grads.dV.shape == (6, 3) and grads.dl.shape == (6,)
    assert grads.dK.shape == (6, 4) and grads.dq.shape == (4,)
    assert np.allclose(grads.dV, a[:, None] * g)
    assert np.isclose(grads.dl.sum(), 0.0)  # sum_i a_i (v_i - o) = 0
    assert np.allclose(grads.dK, 1.5 * np.outer(grads.dl, q))
    with pytest.raises(ValueError, match="g must have length 3"):
        att.attention_gradients(K, V, q, 1.5, g[:2])


def test_softmax_jacobian_matches_finite_differences():
    l = np.array([0.3, -1.0, 2.0, 0.0])
    J = att.softmax_jacobian(l)
    numeric = np.array([numerical_gradient(lambda x, i=i: att.softmax(x)[i], l) for i in range(4)])
    assert np.allclose(J, numeric, atol=1e-9)
    assert np.allclose(J, J.T) and np.allclose(J.sum(axis=1), 0.0)


def test_nadaraya_watson_kernels(store):
    K, V, q = store
    o_exp, a_exp = att.nadaraya_watson(K, V, q, att.exponential_kernel(0.8))
    o_att, a_att = att.attend(K, V, q, 0.8)
    assert np.allclose(o_exp, o_att) and np.allclose(a_exp, a_att)
    unit = K / np.linalg.norm(K, axis=1, keepdims=True)
    o_gauss = att.nadaraya_watson(unit, V, q, att.gaussian_kernel(1 / np.sqrt(3.0)))[0]
    assert np.allclose(o_gauss, att.attend(unit, V, q, 3.0)[0])


def test_nadaraya_watson_rejects_bad_kernels(store):
    K, V, q = store
    with pytest.raises(TypeError, match="kernel"):
        att.nadaraya_watson(K, V, q, "gauss")
    with pytest.raises(ValueError, match="kernel"):
        att.nadaraya_watson(K, V, q, lambda K_, q_: np.ones(2))
    with pytest.raises(ValueError, match="kernel"):
        att.nadaraya_watson(K, V, q, lambda K_, q_: -np.ones(6))
    with pytest.raises(ValueError, match="zero weight"):
        att.nadaraya_watson(K, V, 100 * q, att.gaussian_kernel(1e-3))
    with pytest.raises(ValueError, match="bandwidth"):
        att.gaussian_kernel(0.0)


def test_hopfield_update_descends_the_energy():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((4, 6)) / np.sqrt(6)
    xi = rng.standard_normal(6)
    path = att.hopfield_retrieve(X, xi, 2.0, steps=15)
    assert path.shape == (16, 6) and np.allclose(path[0], xi)
    energies = [att.hopfield_energy(X, p, 2.0) for p in path]
    assert all(e1 <= e0 + 1e-12 for e0, e1 in itertools.pairwise(energies))
    assert np.allclose(path[1], X.T @ att.softmax(2.0 * X @ xi))
    # the energy gradient is xi - X^T softmax(beta X xi) (Derivation D8)
    numeric = numerical_gradient(lambda x: att.hopfield_energy(X, x, 2.0), xi)
    assert np.allclose(numeric, xi - att.hopfield_update(X, xi, 2.0), atol=1e-8)
    with pytest.raises(ValueError, match="xi must have length 6"):
        att.hopfield_update(X, xi[:5], 2.0)
    with pytest.raises(ValueError, match="beta"):
        att.hopfield_energy(X, xi, 0.0)


def test_bilinear_scores_and_gauge():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5, 6))
    W_Q, W_K = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    scores = att.bilinear_scores(X, W_Q, W_K, 0.5)
    assert np.allclose(scores, 0.5 * X @ W_Q @ W_K.T @ X.T)
    assert np.linalg.matrix_rank(scores) == 2
    G = np.array([[2.0, 1.0], [0.0, 0.5]])
    W_Q2, W_K2 = att.gauge_transform(W_Q, W_K, G)
    assert np.allclose(W_K2, W_K @ np.linalg.inv(G).T)
    assert np.allclose(att.bilinear_scores(X, W_Q2, W_K2, 0.5), scores, atol=1e-12)
    with pytest.raises(ValueError, match="G must be invertible"):
        att.gauge_transform(W_Q, W_K, np.ones((2, 2)))
    with pytest.raises(ValueError, match="W_K must have shape"):
        att.bilinear_scores(X, W_Q, W_K[:5], 1.0)


def test_multihead_terms_add_and_one_head_is_attention():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((4, 6))
    W = [rng.standard_normal((6, 6)) for _ in range(4)]
    output, terms = att.multihead(X, *W, h=3, causal=True)
    assert output.shape == (4, 6) and terms.shape == (3, 4, 6)
    assert np.allclose(terms.sum(axis=0), output, atol=1e-12)
    single, _ = att.multihead(X, *W, h=1)
    expected = att.attention(X @ W[0], X @ W[1], X @ W[2], 1 / np.sqrt(6)) @ W[3]
    assert np.allclose(single, expected)
    with pytest.raises(ValueError, match="h must divide"):
        att.multihead(X, *W, h=4)
    with pytest.raises(ValueError, match="W_O must have shape"):
        att.multihead(X, *W[:3], W[3][:5], h=2)


def test_policy_gradient_and_baseline():
    a = att.softmax([0.1, 1.0, -0.5])
    r = np.array([1.0, 2.0, -1.0])
    grad = att.policy_gradient_logits(a, r)
    assert np.isclose(grad.sum(), 0.0)
    assert np.allclose(att.policy_gradient_logits(a, r + 5.0), grad)  # a baseline changes nothing
    numeric = numerical_gradient(lambda l: att.softmax(l) @ r, np.array([0.1, 1.0, -0.5]))
    assert np.allclose(grad, numeric, atol=1e-9)
    with pytest.raises(ValueError, match="a must be a probability vector"):
        att.policy_gradient_logits([0.5, 0.6, 0.1], r)


def test_train_keys_rotates_the_target_key_toward_the_query():
    angles = np.array([0.4, 2.0, -1.2, 3.0, -2.4])
    K = 3.0 * np.c_[np.cos(angles), np.sin(angles)]  # scaled to unit length first
    v = np.array([0.2, 1.0, -0.4, 0.5, 0.0])
    run = att.train_keys(K, v, [1.0, 0.0], target=1.0, beta=4.0, eta=1.0, steps=40)
    assert run.keys.shape == (41, 5, 2) and run.weights.shape == (41, 5)
    assert run.outputs.shape == (41,)
    assert np.allclose(np.linalg.norm(run.keys, axis=2), 1.0)
    assert run.weights[0, 1] < 0.01 and run.weights[-1, 1] > 0.9
    assert abs(run.outputs[-1] - 1.0) < 0.1 < abs(run.outputs[0] - 1.0)
    assert np.isclose(run.outputs[0], att.attend(K / 3.0, v[:, None], [1.0, 0.0], 4.0)[0][0])
    repeat = att.train_keys(K, v, [1.0, 0.0], target=1.0, beta=4.0, eta=1.0, steps=40)
    assert np.array_equal(repeat.keys, run.keys)


def test_train_keys_names_bad_inputs():
    K = np.eye(2)
    with pytest.raises(ValueError, match="K must have no zero rows"):
        att.train_keys(np.zeros((2, 2)), [0.0, 1.0], [1.0, 0.0], 1.0, 1.0, 0.1, 3)
    with pytest.raises(ValueError, match="v must have length 2"):
        att.train_keys(K, [0.0, 1.0, 2.0], [1.0, 0.0], 1.0, 1.0, 0.1, 3)
    with pytest.raises(ValueError, match="eta"):
        att.train_keys(K, [0.0, 1.0], [1.0, 0.0], 1.0, 1.0, 0.0, 3)
    with pytest.raises(TypeError, match="steps"):
        att.train_keys(K, [0.0, 1.0], [1.0, 0.0], 1.0, 1.0, 0.1, 2.5)
