"""The result of a verification and the small tools every verification shares."""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from sympy.polys.matrices import DomainMatrix

PASS, FAIL = "✓", "✗"


@dataclass
class Derivation:
    """What one verification found.

    ``checked`` holds one line per thing checked, each starting with ✓ (it held) or
    ✗ (it did not); ``verified`` is true when every line holds.
    """

    id: str
    statement: str
    verified: bool
    checked: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line: the id, a mark and the statement."""
        mark = PASS if self.verified else FAIL
        return f"{mark} {self.id}. {self.statement}"

    def __str__(self) -> str:
        verdict = "verified" if self.verified else "NOT verified"
        lines = [f"{self.id}. {self.statement}  [{verdict}]"]
        lines += [f"  {line}" for line in self.checked]
        return "\n".join(lines)


class Checklist:
    """Collects the checks of one derivation, then hands back a :class:`Derivation`.

    A check is a test (a function of no argument returning a truth value) and a line
    saying what it tests. A test that raises (a claimed formula with the wrong shape,
    say) counts as failed, and the line says what was raised.
    """

    def __init__(self, ident: str, statement: str):
        self.ident = ident
        self.statement = statement
        self.lines: list[str] = []
        self.all_held = True

    def check(self, text: str, test) -> bool:
        try:
            held = bool(test())
        except Exception as exc:  # a claim that cannot be evaluated is not verified
            held = False
            text = f"{text} (could not be evaluated: {type(exc).__name__}: {exc})"
        self._record(held, text)
        return held

    def _record(self, held: bool, text: str) -> None:
        self.lines.append(f"{PASS if held else FAIL} {text}")
        self.all_held = self.all_held and held

    def result(self) -> Derivation:
        return Derivation(self.ident, self.statement, self.all_held, list(self.lines))


def verification(ident: str, statement: str):
    """Make ``body(c, **claims)``, which records checks on the Checklist ``c``, into a
    function ``(**claims) -> Derivation``.

    The claims are bound before anything runs, so a misspelt claim raises TypeError; an
    error while the body runs (a claim that breaks the set-up) ends the verification with a
    failed line saying so.
    """

    def wrap(body):
        signature = inspect.signature(body)

        @functools.wraps(body)
        def run(*args, **claims) -> Derivation:
            c = Checklist(ident, statement)
            signature.bind(c, *args, **claims)
            try:
                body(c, *args, **claims)
            except Exception as exc:
                c._record(False, f"the verification stopped: {type(exc).__name__}: {exc}")
            return c.result()

        run.__signature__ = signature.replace(
            parameters=list(signature.parameters.values())[1:], return_annotation=Derivation)
        return run

    return wrap


# --- symbolic helpers -------------------------------------------------------------


def vanishes(expr) -> bool:
    """True when a scalar or matrix expression is identically zero.

    The entries are brought into a field of rational functions of their symbols (SymPy's
    ``DomainMatrix``), where zero has a single form; this is much faster than
    ``simplify`` on the nested fractions that inverses of symbolic matrices produce.
    """
    m = sp.Matrix(expr) if isinstance(expr, sp.MatrixBase) else sp.Matrix([sp.sympify(expr)])
    m = m.reshape(len(m), 1)
    # An extra entry holding every symbol makes SymPy build the field over all of them even
    # when every other entry cancels to zero.
    probe = sum(m.free_symbols, sp.Integer(1))
    dm = DomainMatrix.from_Matrix(m.col_join(sp.Matrix([probe])))
    if dm.domain.is_EX:  # functions such as exp or log remain: cancel entry by entry
        return all(sp.cancel(entry) == 0 for entry in m)
    return not any(dm.to_list_flat()[:-1])


def in_field(m: sp.Matrix) -> DomainMatrix:
    """m over the field of rational functions of its symbols, where every entry is one
    reduced fraction and products are fast (SymPy's own products of nested fractions are
    not)."""
    dm = DomainMatrix.from_Matrix(m)
    return dm.convert_to(dm.domain.get_field())


def reduced(m: sp.Matrix) -> sp.Matrix:
    """m with every entry brought to a single reduced fraction."""
    return in_field(m).to_Matrix()


def is_idempotent(m: sp.Matrix) -> bool:
    """True when m @ m = m identically (the product taken in the field)."""
    dm = in_field(m)
    return not any((dm * dm - dm).to_list_flat())


def same(a, b) -> bool:
    """True when two scalar or matrix expressions agree identically (shapes included)."""
    if isinstance(a, sp.MatrixBase) or isinstance(b, sp.MatrixBase):
        if not (isinstance(a, sp.MatrixBase) and isinstance(b, sp.MatrixBase)):
            return False
        if a.shape != b.shape:
            return False
    return vanishes(a - b)


def matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    """A matrix of independent symbols ``name_ij``."""
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}"))


def vector(name: str, size: int) -> sp.Matrix:
    """A column vector of independent symbols ``name_i``."""
    return sp.Matrix(size, 1, lambda i, _: sp.Symbol(f"{name}_{i}"))


def cayley(skew: sp.Matrix) -> sp.Matrix:
    """The orthogonal matrix (I - S)(I + S)^{-1} of a skew-symmetric S (exact, rational)."""
    eye = sp.eye(skew.shape[0])
    return ((eye - skew) * (eye + skew).inv()).applyfunc(sp.cancel)


def skew(size: int, values) -> sp.Matrix:
    """The size x size skew-symmetric matrix whose upper triangle, row by row, holds
    ``values``."""
    upper = iter(values)
    s = sp.zeros(size, size)
    for i in range(size):
        for j in range(i + 1, size):
            s[i, j] = next(upper)
            s[j, i] = -s[i, j]
    return s


def frobenius2(a: sp.Matrix):
    """The squared Frobenius norm, the sum of the squared entries."""
    return sum(entry**2 for entry in a)


def softmax_weights(count: int):
    """Positive symbols e_i standing for exp(l_i), and the weights e_i / sum_j e_j.

    A derivative taken with the exponentials in place is brought to these symbols by
    :func:`name_exponentials`, so that the comparison is between rational functions.
    """
    e = sp.symbols(f"e0:{count}", positive=True)
    total = sum(e)
    return e, sp.Matrix([x / total for x in e])


def name_exponentials(expr, arguments, names):
    """Replace exp(n * arguments[i]) by names[i]**n everywhere in ``expr`` (n an integer;
    SymPy writes exp(x)**2 as exp(2 x))."""
    arguments = [sp.expand(arg) for arg in arguments]
    table = {}
    for power in expr.atoms(sp.exp):
        x = sp.expand(power.args[0])
        for arg, name in zip(arguments, names):
            ratio = sp.cancel(x / arg)
            if ratio.is_Integer:
                table[power] = name**ratio
                break
    return expr.xreplace(table)


# --- Monte Carlo helpers ----------------------------------------------------------


def unit_vectors(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    """``count`` independent uniform unit vectors of R^dim, as rows."""
    g = rng.standard_normal((count, dim))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def sphere_coordinate(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    """``count`` draws of one coordinate of a uniform unit vector of R^dim.

    The coordinate is g / sqrt(g^2 + c) with g standard normal and c chi-square with dim - 1
    degrees of freedom (the squared norm of the other coordinates): the same law as
    normalising a whole Gaussian vector, at the cost of two draws.
    """
    g = rng.standard_normal(count)
    return g / np.sqrt(g**2 + rng.chisquare(dim - 1, count))


def close(estimate: float, target: float, rel: float) -> bool:
    """True when ``estimate`` lies within a relative tolerance ``rel`` of ``target``."""
    return abs(estimate - target) <= rel * abs(target)
