"""The registry of the course's interactive figures.

Each module of this package (other than ``base``) holds one figure and names its
class ``FIGURE``; the module's name is the figure's id with ``_`` for ``-``::

    from memkit import figures
    fig = figures.get("recall-noise")       # default state, no display needed
    fig.controls["M"].value = 40            # redraws synchronously
    fig.caption                             # the one-line reading of the state now
    fig.figure                              # the matplotlib Figure
    fig.widget()                            # the box to display in Jupyter
    figures.get("recall-noise", layout="narrow")  # drawn for a phone's column
    figures.readings("recall-noise", "M")   # {"min": "M = 1: ...", "max": "M = 64: ..."}
    figures.ids()                           # every registered id

In a chapter the last line of a cell, ``figures.get(id)``, displays the figure:
live in JupyterLab, as a picture of its state in the HTML and PDF books.
"""

from __future__ import annotations

import importlib
import pkgutil

from memkit.figures.base import InteractiveFigure

__all__ = ["InteractiveFigure", "get", "ids", "readings"]

#: modules of the package that hold no figure: the protocol and the frame renderer
NOT_FIGURES = {"base", "frames"}


def ids() -> list[str]:
    """Every registered figure id, sorted."""
    names = (m.name for m in pkgutil.iter_modules(__path__) if m.name not in NOT_FIGURES)
    return sorted(name.replace("_", "-") for name in names)


def get(figure_id: str, layout: str = "wide", **state) -> InteractiveFigure:
    """A new figure ``figure_id`` in its default state, or with the given control values,
    drawn in ``layout`` ("wide", or "narrow" for a phone's column)."""
    known = ids()
    if figure_id not in known:
        raise KeyError(f"no figure {figure_id!r}; registered figures: {', '.join(known)}")
    module = importlib.import_module(f"memkit.figures.{figure_id.replace('-', '_')}")
    return module.FIGURE(layout=layout, **state)


def readings(figure_id: str, control: str) -> dict[str, str]:
    """The one-line reading of ``figure_id`` with one control moved, the others in their
    default state: a slider at each end of its range (keys ``"min"`` and ``"max"``), a
    menu or a row of buttons at each of its options (keys: the options).

    The printed book quotes them beside the picture of the default state, to say what
    the live figure shows as the control moves.
    """
    widget = get(figure_id).controls[control]
    options = getattr(widget, "options", None)
    settings = ({str(option): option for option in options} if options
                else {"min": widget.min, "max": widget.max})
    return {key: get(figure_id, **{control: value}).caption for key, value in settings.items()}
