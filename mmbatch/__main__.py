"""Allow ``python -m mmbatch``."""

from mmbatch.cli import main

raise SystemExit(main())
