"""Allow ``python -m mmbatch``."""

from mmbatch.cli import console

console()
