"""The nbgrader preprocessors the grader runs a submission with, by name on nbgrader's
command line.

``SandboxExecute`` is nbgrader's Execute with every kernel in the sandbox, one notebook
ahead (``tools.grading.kernels``; ``Sandbox.mode`` ``off``: nbgrader's own kernels);
``VisibleTests`` clears the hidden tests of the test cells only.
``sanitize_preprocessors`` and ``autograde_preprocessors`` are the values of nbgrader's
``--Autograde.sanitize_preprocessors`` and ``--Autograde.autograde_preprocessors``.

Stage: autograding (nbgrader loads these by name).
"""

from __future__ import annotations

import json

from nbgrader.preprocessors import ClearHiddenTests, Execute
from traitlets import Enum

from tools.common import nbgrader_cells
from tools.grading.box import Sandbox
from tools.grading.kernels import SpareKernelManager


class SandboxExecute(Execute):
    """nbgrader's Execute, with every kernel started in the sandbox, one notebook ahead.

    A kernel is killed once its notebook has run (``shutdown_kernel``): nothing in its
    box outlives it, so there is nothing to wait for a graceful end. The sandbox's
    settings (``c.Sandbox``, ``tools.grading.box.Sandbox``) are read, and a bad one
    raised, when the preprocessor is made.
    """

    shutdown_kernel = Enum(["graceful", "immediate"], default_value="immediate").tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if Sandbox(parent=self).mode != "off":
            self.kernel_manager_class = SpareKernelManager


class VisibleTests(ClearHiddenTests):
    """nbgrader's ``ClearHiddenTests`` on the test cells only (a student's own cell that
    happens to hold the marker text is the student's, left as written)."""

    def preprocess_cell(self, cell, resources, cell_index):
        if nbgrader_cells.is_test(cell):
            return super().preprocess_cell(cell, resources, cell_index)
        return cell, resources


def sanitize_preprocessors() -> str:
    """The value of ``--Autograde.sanitize_preprocessors``: nbgrader's, with its own
    ``ClearHiddenTests`` (``VisibleTests``) after ``OverwriteCells`` (which puts the gradebook's test cells
    back, hidden tests in): the kernel runs the visible part of each test only, and the
    grader runs the whole cell in its own process (``tools.grading.recheck``)."""
    names = [
        "nbgrader.preprocessors.ClearOutput",
        "nbgrader.preprocessors.DeduplicateIds",
        "nbgrader.preprocessors.OverwriteKernelspec",
        "nbgrader.preprocessors.OverwriteCells",
        "tools.grading.preprocessors.VisibleTests",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]
    return json.dumps(names)


def autograde_preprocessors() -> str:
    """The value of ``--Autograde.autograde_preprocessors``: nbgrader's, Execute sandboxed."""
    names = [
        "tools.grading.preprocessors.SandboxExecute",
        "nbgrader.preprocessors.IgnorePattern",
        "nbconvert.preprocessors.ClearMetadataPreprocessor",
        "nbgrader.preprocessors.LimitOutput",
        "nbgrader.preprocessors.SaveAutoGrades",
        "nbgrader.preprocessors.AssignLatePenalties",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]
    return json.dumps(names)
