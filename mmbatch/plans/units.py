"""A plan cut into units of work, and the units one machine of ``--shard K/N`` runs.

A unit is one row shard of one (model, benchmark) pair; a benchmark declared with ``shards: S`` gives each pair S
units. Units are numbered models first, then benchmarks, then row shards, and machine K of N takes every N-th unit
from K (datatrove's ``rank::world_size``), so N machines share the plan whatever its shape and each loads only the
models of its own units.
"""

from __future__ import annotations

from dataclasses import dataclass

from mmbatch.plans.spec import BenchmarkEntry, ModelEntry, Plan
from mmbatch.shards import Shard


@dataclass(frozen=True)
class Unit:
    """One row shard of one (model, benchmark) pair."""

    model: ModelEntry
    """The model."""
    benchmark: BenchmarkEntry
    """The benchmark."""
    rows: Shard
    """Which rows of the benchmark (the whole file when the benchmark has one shard)."""

    @property
    def label(self) -> str:
        """``model / benchmark`` and, for a row shard, ``(rows K/N)``."""
        rows = "" if self.rows.is_whole else f" (rows {self.rows})"
        return f"{self.model.name} / {self.benchmark.name}{rows}"


def plan_units(plan: Plan) -> list[Unit]:
    """Every unit of the plan, in order."""
    return [Unit(model, benchmark, Shard(k, benchmark.shards))
            for model in plan.models for benchmark in plan.benchmarks for k in range(benchmark.shards)]


def assigned_units(plan: Plan, machine: Shard) -> list[Unit]:
    """The units machine ``machine.k`` of ``machine.n`` runs."""
    return [unit for position, unit in enumerate(plan_units(plan)) if position % machine.n == machine.k]
