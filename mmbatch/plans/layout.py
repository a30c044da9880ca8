"""Where a plan's files go: one predictable folder per benchmark and per (model, benchmark) pair.

```
OUTPUT/
  benchmarks/<benchmark>/prepared.parquet       prepare's output, shared by every model
  benchmarks/<benchmark>/prepare.json           what it was prepared from (a rerun skips an unchanged one)
  models/<model>/<benchmark>/predictions.parquet, extracted.parquet, metrics.json, metrics.hits.parquet
  models/<model>/<benchmark>/pair.json          written last: the pair is finished (its exit status, its settings)
  report.html, report.md, report.csv            the leaderboard of every finished pair
```

A pair's files are the usual stage files, so any stage can still be run alone on them (docs/plans.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mmbatch.infer.outputs import shard_output_path
from mmbatch.plans.spec import BenchmarkEntry, ModelEntry
from mmbatch.shards import Shard
from mmbatch.stage_files import StageFiles


@dataclass(frozen=True)
class PairFiles(StageFiles):
    """The stage files of one (model, benchmark) pair, in ``OUTPUT/models/<model>/<benchmark>``; ``predictions`` is
    merged from the row shards when the benchmark has several."""

    @property
    def status(self) -> Path:
        """The pair's completion record, written after ``score``."""
        return self.folder / "pair.json"

    def shard_predictions(self, shard: Shard) -> Path:
        """``infer``'s output for one row shard (``predictions.shard-K-of-N.parquet``)."""
        return shard_output_path(self.predictions, shard)


@dataclass(frozen=True)
class PlanLayout:
    """The folders of a plan's output root."""

    root: Path
    """The plan's ``output``."""

    def prepared(self, benchmark: BenchmarkEntry) -> Path:
        """The benchmark's prepared file, shared by every model."""
        return self.root / "benchmarks" / benchmark.name / "prepared.parquet"

    def prepare_record(self, benchmark: BenchmarkEntry) -> Path:
        """What the prepared file was made from, so that a rerun can skip ``prepare``."""
        return self.root / "benchmarks" / benchmark.name / "prepare.json"

    def pair(self, model: ModelEntry, benchmark: BenchmarkEntry) -> PairFiles:
        """The stage files of ``model`` on ``benchmark``."""
        return PairFiles(self.root / "models" / model.name / benchmark.name)

    def report(self, report_format: str) -> Path:
        """The report of the whole plan in ``report_format`` (``html``, ``md``, ``csv``, ``tsv``)."""
        return self.root / f"report.{report_format}"
