"""Numbers stated in the prose of Chapters 0-5 and Appendices A-D (issue 12)."""
import numpy as np
import pytest

from memkit import costs, linalg


def test_ch01_hand_example_rows_and_columns():
    W = np.array([[1, 2], [3, -1], [0, 4]])
    x = np.array([2, 1])
    y_rows, products = linalg.matvec_by_rows(W, x)
    y_cols, scaled = linalg.matvec_by_columns(W, x)
    assert y_rows.tolist() == [4, 5, 4]
    assert products.tolist() == [[2, 2], [6, -1], [0, 4]]
    assert scaled.tolist() == [[2, 6, 0], [2, -1, 4]]
    assert y_cols.tolist() == [4, 5, 4]


def test_ch02_hand_example_four_readings():
    A = np.array([[1, 2], [3, 0]])
    B = np.array([[2, 0, 1], [1, -1, 3]])
    expected = [[4, -2, 7], [6, 0, 3]]
    for product in (linalg.matmul_entry, linalg.matmul_row, linalg.matmul_column, linalg.matmul_outer):
        assert product(A, B).tolist() == expected
    layers = linalg.outer_terms(A, B)
    assert layers[0].tolist() == [[2, 0, 1], [6, 0, 3]]
    assert layers[1].tolist() == [[2, -2, 6], [0, 0, 0]]


def test_ch02_three_terms_hold_98_4_percent_of_the_pattern():
    # the prose says 98.4 % kept and 1.6 % left for the other five terms
    _, kept = linalg.svd_energy(linalg.structured_pattern())
    assert round(100 * kept[2], 1) == 98.4
    assert round(100 * (1 - kept[2]), 1) == 1.6


def test_ch05_swiglu_hidden_rounds_8d_over_3_like_llama():
    # Llama 7B: d = 4096, int(8 * 4096 / 3) = 10922, next multiple of 256 = 11008
    assert costs.swiglu_hidden(4096) == 11008
    assert costs.swiglu_hidden(4096, multiple_of=1) == 10922
    assert costs.swiglu_hidden(768) == 2048  # 8 * 768 / 3 = 2048 is already a multiple of 256
    assert costs.swiglu_params(4096, costs.swiglu_hidden(4096)) == 135_266_304  # 3 * 4096 * 11008
    assert costs.swiglu_params(4096) == 134_217_728  # 8 * 4096**2 with the fractional width
    with pytest.raises(ValueError, match="multiple_of"):
        costs.swiglu_hidden(4096, multiple_of=0)


def test_ch04_which_keys_must_be_independent():
    # Ch 4: M >= d_k needs independent columns of K (K^T K invertible), M <= d_k independent rows
    rng = np.random.default_rng(0)
    tall, wide = rng.standard_normal((12, 4)), rng.standard_normal((3, 8))
    assert linalg.rank(tall.T @ tall) == 4 and linalg.rank(wide @ wide.T) == 3
    dependent_columns = np.column_stack([tall[:, :3], tall[:, 0] + tall[:, 1]])
    assert linalg.rank(dependent_columns.T @ dependent_columns) == 3  # singular: no K^T K inverse


def test_the_course_never_speaks_of_its_source_in_chapters_0_to_5():
    import pathlib

    book = pathlib.Path(__file__).resolve().parents[1] / "book"
    pages = ["prologue.md", "ch00-how-to-use.md", "ch01-matrix-vector.md", "ch02-matrix-matrix.md",
             "ch03-outer-product-memory.md", "ch04-careful-writes.md", "ch05-mlp-memory.md",
             "appendix-a-linear-algebra.md", "appendix-b-calculus-probability.md",
             "appendix-c-machine-learning.md", "appendix-e-glossary.md"]
    for page in pages:
        assert "monograph" not in (book / page).read_text().lower(), page
