"""Derivations D1-D20 of Appendix D, each verified with SymPy.

``verify("D7")`` runs one verification and returns a :class:`Derivation` (its id, the
statement in one line, whether it was verified, and one line per thing checked);
``verify_all()`` runs the twenty; ``ids()`` lists them.

Each verification is also a function ``d1`` ... ``d20`` whose keyword arguments are the
ingredients under test (a claimed formula, as a function of the symbols the verification
provides), defaulting to the monograph's statement. The verification computes the same
quantity with SymPy and compares, so a wrong claim comes back with ``verified`` False::

    d7(capacity=lambda beta, d: sp.exp(beta * (1 - beta / d))).verified   # False

Where the statement is about random vectors a Monte Carlo check with a fixed seed stands
beside the symbolic one, its tolerance stated in its line.
"""

from __future__ import annotations

from ._core import Derivation
from .attention import d6, d8, d9, d16, d18, d19
from .linear import d3, d5, d14, d17
from .lowrank import d4, d20
from .reads import d10, d11, d12, d15
from .vectors import d1, d2, d7, d13

__all__ = ["Derivation", "verify", "verify_all", "ids",
           "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10",
           "d11", "d12", "d13", "d14", "d15", "d16", "d17", "d18", "d19", "d20"]

_VERIFICATIONS = {
    "D1": d1, "D2": d2, "D3": d3, "D4": d4, "D5": d5, "D6": d6, "D7": d7, "D8": d8,
    "D9": d9, "D10": d10, "D11": d11, "D12": d12, "D13": d13, "D14": d14, "D15": d15,
    "D16": d16, "D17": d17, "D18": d18, "D19": d19, "D20": d20,
}


def ids() -> list[str]:
    """The derivation ids, D1 to D20."""
    return list(_VERIFICATIONS)


def verify(ident: str, **claims) -> Derivation:
    """Run the verification of derivation ``ident`` ("D1" ... "D20", any case).

    Keyword arguments replace the monograph's claims (see ``d1`` ... ``d20``)."""
    key = ident.strip().upper()
    if key not in _VERIFICATIONS:
        raise KeyError(f"unknown derivation {ident!r}; the ids are {', '.join(ids())}")
    return _VERIFICATIONS[key](**claims)


def verify_all() -> list[Derivation]:
    """Run the twenty verifications, in order."""
    return [verify(ident) for ident in ids()]
