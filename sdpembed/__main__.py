"""``python -m sdpembed``: the command line (see :mod:`sdpembed.cli`)."""

import sys

from .cli import main

sys.exit(main())
