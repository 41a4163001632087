"""``python -m tools.grading``: the command line (``tools.grading.cli``).

The classes the Dask workers unpickle live in the stage modules (not in ``__main__``).
"""

import sys

from tools.grading.cli import main

if __name__ == "__main__":
    sys.exit(main())
