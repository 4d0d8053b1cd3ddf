"""``python -m structgen``: the same as the ``structgen`` command."""

import sys

from structgen.cli import main

sys.exit(main())
