"""Benchmarks: one package each (how to read its sources, match its answers, aggregate its scores).

``READERS`` maps a ``--benchmark`` name to the module whose ``READER`` (a :class:`~mmbatch.benchmarks.base.Reader`)
reads the official format. Modules are imported only when chosen.
"""

from __future__ import annotations

import importlib

from mmbatch.benchmarks.base import Reader
from mmbatch.errors import BadInputError

READERS: dict[str, str] = {
    "mmbench": "mmbatch.benchmarks.mmbench.read",
    "ccbench": "mmbatch.benchmarks.mmbench.read",
    "mme": "mmbatch.benchmarks.mme.read",
    "seedbench": "mmbatch.benchmarks.seedbench.read",
    "seedbench2": "mmbatch.benchmarks.seedbench.read2",
}
"""Benchmark name -> module holding its ``READER``."""


def get_reader(name: str) -> Reader:
    """The reader registered for ``--benchmark name``."""
    module_name = READERS.get(name.lower())
    if module_name is None:
        raise BadInputError(f"unknown benchmark {name!r}; choose one of {', '.join(READERS)}")
    reader: Reader = importlib.import_module(module_name).READER
    return reader
