"""Importing an optional tracking library, or exit 2 with the command that installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from mmbatch.errors import BadInputError


def import_extra(module: str, extra: str) -> ModuleType:
    """``module``, imported now.

    Raises:
        BadInputError: it is not installed (the message gives ``pip install 'mmbatch[extra]'``).
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise BadInputError(f"--to {extra} needs {module}, which is not installed here: pip install "
                            f"'mmbatch[{extra}]' (docs/tracking.md)") from None
