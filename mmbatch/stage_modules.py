"""Stage packages that can be called as their stage function.

``mmbatch.infer``, ``mmbatch.extract`` and ``mmbatch.score`` are packages and ``mmbatch.prepare`` a module, so
``from mmbatch import infer`` returns the package whenever anything imported it first. Giving those modules this
class makes the package itself call :mod:`mmbatch.api`'s function of the same name, so the import means one thing
whatever the import order; ``mmbatch.infer.stage`` and the other submodules are untouched.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class CallableStage(types.ModuleType):
    """A stage's module, callable as :mod:`mmbatch.api`'s function of the same name."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        api = importlib.import_module("mmbatch.api")
        return getattr(api, self.__name__.rsplit(".", 1)[-1])(*args, **kwargs)


def make_callable(module_name: str) -> None:
    """Make the (already imported) module ``module_name`` a :class:`CallableStage`."""
    sys.modules[module_name].__class__ = CallableStage
