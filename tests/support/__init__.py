"""What the tests share besides fixtures: the course's root, and the helpers of
``support.assignment_cells`` (a notebook's cells run in this process) and ``support.cheats``
(what a dishonest answer writes). ``tests/`` is on ``sys.path`` (tests/conftest.py), so a
test imports ``from support import ROOT``."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
