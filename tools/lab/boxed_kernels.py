"""A student's notebook opened in the instructor's lab runs in the grader's box.

A notebook under a folder of students' work (``submitted/``, ``autograded/``,
``feedback/``: ``tools.lab.student_work.STUDENT_FOLDERS``) of the lab's root gets its
kernel started in the box the grader runs submissions in (``tools.grading.box``, its kernels ``tools.grading.kernels``): a
private folder holding a copy of the notebook's folder's files (no notebook, no course
file, no solution, no gradebook), the course's Python read-only, no network, no
environment, a PID namespace of its own; its own user when the server runs as root, else
an unprivileged user namespace. JupyterLab shows that kernel as *Python 3 (sandboxed)*
(``python3-boxed``); choosing it for any notebook boxes that one too. *Run All* on a
student's notebook therefore runs nothing with the instructor's files.

The instructor who wants a student's notebook run as themselves picks the kernel
*Python 3 (as me)* (``python3-as-me``) for it, explicitly, notebook by notebook.

Loaded by the instructor's lab as ``ServerApp.kernel_manager_class``
(``jupyter/jupyter_server_config.py``); a student's lab keeps Jupyter's own.
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_server.services.kernels.kernelmanager import (AsyncMappingKernelManager,
                                                           ServerKernelManager)

from tools.grading.kernels import SandboxKernelManager
from tools.lab.student_work import STUDENT_FOLDERS

BOXED = "python3-boxed"
AS_ME = "python3-as-me"


class BoxedKernelManager(SandboxKernelManager, ServerKernelManager):
    """The grader's sandboxed kernel, with what the server tracks of each kernel."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kernel_name = BOXED


def boxed(kernel_name: str | None, cwd: str | None, root: str) -> bool:
    """Whether a kernel started in ``cwd`` goes in the box: asked for by name, or a
    student's notebook (a folder of students' work under the lab's ``root``) not
    explicitly run with ``python3-as-me``."""
    if kernel_name == BOXED:
        return True
    if kernel_name == AS_ME or not cwd:
        return False
    try:
        inside = Path(os.path.realpath(cwd)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return bool(STUDENT_FOLDERS & set(inside.parts))


class CourseKernels(AsyncMappingKernelManager):
    """The lab's kernels: a student's notebook's in the box (``boxed``), the rest as
    Jupyter starts them."""

    def pre_start_kernel(self, kernel_name, kwargs):
        if not boxed(kernel_name, kwargs.get("cwd"), self.root_dir):
            return super().pre_start_kernel(kernel_name, kwargs)
        kernel_id = kwargs.pop("kernel_id", self.new_kernel_id(**kwargs))
        manager = BoxedKernelManager(parent=self, log=self.log,
                                     kernel_spec_manager=self.kernel_spec_manager)
        self.log.info("[memcourse] a student's notebook in %s: its kernel in the grader's box",
                      kwargs.get("cwd"))
        return manager, BOXED, kernel_id
