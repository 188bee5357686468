"""``python -m golden.experiments``: see :func:`golden.experiments.main`."""

from . import main

raise SystemExit(main())
