"""What the tests and the benchmarks share besides fixtures: the course's root (``ROOT``),
and these modules:

====================  ================================================================
``assignment_cells``  a notebook's cells run in this process
``cheats``            what a dishonest answer writes
``hub_users``         the Unix users of a real hub's tests, a command run as one
``simulate``          a simulated class to grade, each submission with the score it
                      should get (honest, troubled, hostile, copied, of set abilities)
``site_browser``      the built HTML book opened in Debian's chromium, a page's first
                      load weighed (served by ``tools.book.serve``)
``lab_browser``       the course's JupyterLab on a free port, driven in Chromium
====================  ================================================================

``tests/`` is on ``sys.path`` (tests/conftest.py), so a test imports ``from support import
ROOT``. A benchmark puts the repository's root on ``sys.path`` and imports
``tests.support`` (``tests/`` is a namespace package: it has no ``__init__``). Inside this
package the modules import each other relatively, so that either name works. Nothing of
``tools`` imports this package.
"""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
