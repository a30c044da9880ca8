"""mmbatch: offline batch evaluation of multimodal LLMs as four resumable stages.

prepare -> infer -> extract -> score, each a function from one MMBench-style table to the next:
``from mmbatch import prepare, infer, extract, score`` (docs/python-api.md).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = frozenset({"prepare", "infer", "extract", "score", "PrepareOptions", "InferOptions", "ExtractOptions",
                  "ScoreOptions"})
"""Names :mod:`mmbatch.api` provides here, imported on first use so that ``import mmbatch`` stays cheap."""


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module("mmbatch.api"), name)
    raise AttributeError(f"module 'mmbatch' has no attribute {name!r}")
