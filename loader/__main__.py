"""``python -m loader`` runs the ``tool-loader`` command line."""

import sys

from .console.cli import main

sys.exit(main())
