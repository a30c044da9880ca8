"""Benchmarks: one package each (how to read its sources, match its answers, aggregate its scores).

Each package declares its :class:`~mmbatch.benchmarks.declaration.Benchmark` (names, version, reader, scorer,
answer kind, grouping, report view, export formats) in its ``__init__``; :mod:`mmbatch.benchmarks.registry` lists
them. Reader and scorer modules are imported only when chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mmbatch.benchmarks.declaration import load

if TYPE_CHECKING:
    from mmbatch.benchmarks.base import Reader


def get_reader(name: str) -> Reader:
    """The reader of ``--benchmark name`` (a name or alias, any case).

    Raises:
        BadInputError: no benchmark has that name.
    """
    from mmbatch.benchmarks.registry import get_benchmark

    reader: Reader = load(get_benchmark(name).reader)
    return reader
