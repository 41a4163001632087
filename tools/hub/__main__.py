"""``python -m tools.hub start|stop``: the local course hub (``tools.hub.local``)."""

import sys

from tools.hub.local import main

if __name__ == "__main__":
    sys.exit(main())
