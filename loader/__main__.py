"""``python -m loader`` runs the ``tool-loader`` command line."""

import sys

from .cli import main

sys.exit(main())
