"""``python -m tests.support.simulate``: write a simulated class (``tests.support.simulate.classroom``)."""

import sys

from .classroom import main

if __name__ == "__main__":
    sys.exit(main())
