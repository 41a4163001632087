"""``python -m tools.grading.simulate``: write a simulated class (``tools.grading.simulate.classroom``)."""

import sys

from tools.grading.simulate.classroom import main

if __name__ == "__main__":
    sys.exit(main())
