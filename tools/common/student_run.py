"""One student's run of an assignment's cells in this process: their numbers and the
reference code beside the notebook.

``as_student(student, folder=None, seat=None)`` is a context manager that sets the
environment ``memkit.variants`` draws a student's numbers from (``MEMCOURSE_STUDENT_ID``, and
``MEMCOURSE_SEAT`` when ``seat`` is given, else unset) and puts ``folder`` (the folder of
the solutions' ``answer_key.py``) first on ``sys.path`` with no ``answer_key`` imported
yet; both are as they were afterwards.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from memkit.variants import ENV, SEAT_ENV


@contextlib.contextmanager
def as_student(student: str, folder: Path | None = None, seat: int | None = None):
    saved = {name: os.environ.get(name) for name in (ENV, SEAT_ENV)}
    saved_path = list(sys.path)
    os.environ[ENV] = student
    os.environ.pop(SEAT_ENV, None)
    if seat is not None:
        os.environ[SEAT_ENV] = str(seat)
    if folder is not None:
        sys.path.insert(0, str(folder))
    sys.modules.pop("answer_key", None)
    try:
        yield
    finally:
        sys.modules.pop("answer_key", None)
        sys.path[:] = saved_path
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
