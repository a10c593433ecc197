"""``python -m srcgrad``: see :mod:`srcgrad.cli`."""

import sys

from .cli import main

sys.exit(main())
