"""Deltas against a baseline model, from ``mmbatch compare`` results, for the report's boards.

``compare`` has already done the statistics on the rows both models answered (paired bootstrap interval, McNemar's
exact test or, for graded scores, the sign test); the report only looks up, for each model of a board, its
comparison with the baseline on each headline metric and marks the significant ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mmbatch.compare.stage import CompareResult
from mmbatch.compare.tables import significance_marker
from mmbatch.errors import BadInputError
from mmbatch.report.inputs import display_name
from mmbatch.report.leaderboard import Board
from mmbatch.report.provenance import Provenance

INTERVAL_MARK = "†"
"""Marks a difference whose paired 95 % interval excludes 0, for metrics without per-unit verdicts."""
LEGEND = ("Δ = model − baseline on the rows both answered. * p < 0.05, ** p < 0.01, *** p < 0.001: McNemar's "
          "exact test on unit verdicts (circular group, MME image, SEED row), or the exact sign test on graded "
          f"scores (VQA accuracy, ANLS, a judge's grade); {INTERVAL_MARK}: no paired test (e.g. MME score, vanilla "
          "accuracy) and the paired 95 % bootstrap interval excludes 0.")


@dataclass(frozen=True)
class Delta:
    """One model's difference from the baseline on one metric."""

    diff: float
    """Model minus baseline."""
    ci_low: float | None
    """Lower end of the paired 95 % interval."""
    ci_high: float | None
    """Upper end."""
    p_value: float | None
    """The paired test's p-value (McNemar's, or the sign test's for graded scores), when one applies."""

    @property
    def marker(self) -> str:
        """Significance marker (see :data:`LEGEND`)."""
        if self.p_value is not None:
            return significance_marker(self.p_value)
        if self.ci_low is not None and self.ci_high is not None and (self.ci_low > 0 or self.ci_high < 0):
            return INTERVAL_MARK
        return ""

    def text(self, *, interval: bool = True) -> str:
        """``+1.23 [-0.50, +2.90] **``."""
        span = (f" [{self.ci_low:+.2f}, {self.ci_high:+.2f}]"
                if interval and self.ci_low is not None and self.ci_high is not None else "")
        return f"{self.diff:+.2f}{span} {self.marker}".strip()


@dataclass(frozen=True)
class BaselineDeltas:
    """A board's deltas: the baseline model and, per other model, one delta (or None) per headline column."""

    baseline: str
    """The baseline model's display name."""
    deltas: dict[str, tuple[Delta | None, ...]]
    """Model -> delta per headline column."""


def check_compared_runs(path: Path, result: CompareResult, origins: list[Provenance]) -> None:
    """Refuse a comparison that was not computed on the hits files of the metrics reported.

    ``compare`` records the SHA-256 of the two hits files it read, ``score`` the digest of the hits file beside each
    metrics file: a comparison of other runs (of the same model names) would put its deltas beside numbers it never
    saw.

    Raises:
        BadInputError: the comparison records no digests, or one of them is no reported metrics file's hits.
    """
    digests = result.settings.get("hits_sha256")
    if not isinstance(digests, dict) or not all(isinstance(digests.get(side), str) for side in "ab"):
        raise BadInputError("the comparison does not record the digests of the hits files it compared (an older "
                            "mmbatch wrote it): rerun mmbatch compare on the hits files beside the reported metrics",
                            path=path)
    reported = {origin.hits_sha256 for origin in origins if origin.hits_sha256}
    for side in "ab":
        if digests[side] not in reported:
            compared = result.settings.get(f"file_{side}") or f"file {side.upper()}"
            raise BadInputError(f"the comparison was computed on {compared} (SHA-256 {str(digests[side])[:16]}), "
                                "which is not the hits file of any metrics file reported: its deltas belong to other "
                                "runs. Compare the hits files written beside the reported metrics (rescore an older "
                                "metrics file first)", path=path)


def board_deltas(board: Board, comparisons: list[CompareResult], shown: dict[str, str]) -> BaselineDeltas | None:
    """The deltas of ``board``'s models against the baseline of the first comparison that covers the board.

    ``shown`` maps model names as recorded to the report's names (labels), so both sides name models alike.
    """
    for result in comparisons:
        rows = result.comparisons.filter((pl.col("benchmark") == board.benchmark)
                                         & pl.col("split").eq_missing(board.split))
        if rows.height == 0:
            continue
        rows = rows.with_columns(pl.col("model_a", "model_b").map_elements(lambda m: shown.get(m, display_name(m)),
                                                                           return_dtype=pl.String))
        baseline = str(rows["model_a"][0])
        deltas: dict[str, tuple[Delta | None, ...]] = {}
        for model in rows.filter(pl.col("model_a") == baseline)["model_b"].unique(maintain_order=True).to_list():
            mine = rows.filter((pl.col("model_a") == baseline) & (pl.col("model_b") == model))
            deltas[str(model)] = tuple(_delta(mine, level, group, metric) for level, group, metric in board.headline)
        return BaselineDeltas(baseline, deltas)
    return None


def _delta(rows: pl.DataFrame, level: str, group: str, metric: str) -> Delta | None:
    hit = rows.filter((pl.col("level") == level) & (pl.col("group") == group) & (pl.col("metric") == metric))
    if hit.height == 0:
        return None
    row = hit.row(0, named=True)
    return Delta(row["diff"], row["ci_low"], row["ci_high"], row["p_value"])
