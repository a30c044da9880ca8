"""Stage packages that can be called as their stage function.

``mmbatch.infer``, ``mmbatch.extract`` and ``mmbatch.score`` are packages and ``mmbatch.prepare`` a module, so
``from mmbatch import infer`` returns the package whenever anything imported it first. Giving those modules this
class makes the module itself call its stage function (the one :mod:`mmbatch.api` hands out under the same name), so
the import means one thing whatever the import order; ``mmbatch.infer.stage`` and the other submodules are untouched.
Each stage names its own function, imported on the first call, so nothing here depends on the stages or the API.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from mmbatch.references import load


class CallableStage(types.ModuleType):
    """A stage's module, callable as its stage function."""

    stage_function: str
    """``module:attribute`` of the stage function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return load(self.stage_function)(*args, **kwargs)


def make_callable(module_name: str, stage_function: str) -> None:
    """Make the (already imported) module ``module_name`` a :class:`CallableStage` calling ``stage_function``
    (``module:attribute``)."""
    module = sys.modules[module_name]
    module.__class__ = CallableStage
    module.stage_function = stage_function  # type: ignore[attr-defined]
