"""``python -m tools.release``: regenerate the release (``tools.release.assignments``)."""

import sys

from tools.release.assignments import main

if __name__ == "__main__":
    sys.exit(main())
