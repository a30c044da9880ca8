"""Each row's extract columns as frames: the rules' decisions for every row, the judge's and CLIP's on top.

The rules decide every row again on each run (they are cheap and deterministic for the same settings); only the
outcomes of the judge and of CLIP, which cost calls and model time, are committed to the journal one batch at a
time, and a rerun takes them back as a frame: those of the rows the rules leave open, from the journal or from a
finished output (whose other rows the rules decide again as they were).
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from mmbatch.answers.frames import nulls
from mmbatch.extract.outcome import OUTCOME_COLUMNS, Outcome
from mmbatch.journal import RowJournal

SIMILARITIES = "choice_similarities"
"""Written only by ``clip`` rows; an extracted file without generate-image rows does not have the column."""
SCHEMA: dict[str, pl.DataType] = {"index": pl.Int64(), **{name: pl.String() for name in OUTCOME_COLUMNS},
                                  "error": pl.String(), SIMILARITIES: pl.List(pl.Float64())}
"""The columns of a row's outcome, as committed to the journal."""
_NEW = "\x1fnew"


def outcome_frame(rows: Iterable[tuple[int, Outcome]]) -> pl.DataFrame:
    """The outcomes of some rows (the judge's, CLIP's) as a frame of :data:`SCHEMA`."""
    rows = list(rows)
    return pl.DataFrame({
        "index": [index for index, _ in rows],
        "extracted": [o.extracted for _, o in rows],
        "extract_method": [o.method for _, o in rows],
        "judge_model": [o.judge_model for _, o in rows],
        "judge_raw": [o.judge_raw for _, o in rows],
        "extract_note": [o.note for _, o in rows],
        "error": [o.error for _, o in rows],
        SIMILARITIES: [None if o.similarities is None else list(o.similarities) for _, o in rows],
    }, schema=SCHEMA)


def committed_outcomes(journal: RowJournal, only: pl.Series | None = None) -> pl.DataFrame:
    """Rows finished by an earlier run (or in a finished output), as a frame of :data:`SCHEMA`; failed rows are
    left out, so they run again. ``only``: the rows of these indices alone, the others not read."""
    rows = _finished(journal.rows(only=only))
    if rows is None:
        return pl.DataFrame(schema=SCHEMA)
    return rows.select(pl.col(name).cast(dtype) if name in rows.columns else pl.lit(None, dtype=dtype).alias(name)
                       for name, dtype in SCHEMA.items())


def committed_count(journal: RowJournal, index: pl.Series) -> int:
    """How many of the rows ``index`` an earlier run (or a finished output) finished, failed ones not counted: what a
    rerun reports as reused. Only the three columns that tell are read."""
    rows = _finished(journal.rows(columns=("index", "extract_method", "error")))
    return 0 if rows is None else int(index.is_in(rows["index"].implode()).sum())


def _finished(rows: pl.DataFrame | None) -> pl.DataFrame | None:
    """The committed rows that have an outcome and no error; None when there is none."""
    if rows is None or "extract_method" not in rows.columns:
        return None
    if "error" in rows.columns:
        rows = rows.filter(pl.col("error").is_null())
    return rows.filter(pl.col("extract_method").is_not_null())


def rule_decisions(height: int) -> pl.DataFrame:
    """An empty decision for each of ``height`` rows (every column null), for the rules to fill."""
    return pl.DataFrame([nulls(name, height, dtype) for name, dtype in SCHEMA.items() if name != "index"])


def with_updates(decisions: pl.DataFrame, index: pl.Series, updates: pl.DataFrame) -> pl.DataFrame:
    """``decisions`` (one row per ``index``, in order) with the rows of ``updates`` (keyed by ``index``, the later
    copy of an index winning) put in their place."""
    if updates.height == 0:
        return decisions
    updates = last_per_index(updates)
    new = {name: f"{name}{_NEW}" for name in decisions.columns}
    placed = index.to_frame("index").join(updates.rename(new), on="index", how="left", maintain_order="left")
    updated = pl.col(f"extract_method{_NEW}").is_not_null()  # every outcome has a method
    return decisions.hstack(placed.drop("index")).select(
        pl.when(updated).then(pl.col(new[name])).otherwise(pl.col(name)).alias(name) for name in decisions.columns)


def last_per_index(updates: pl.DataFrame) -> pl.DataFrame:
    """``updates`` with one row per ``index``, the later copy winning; as they are when each index is there once
    (de-duplicating batches that need none took ~0.15 s of a rerun over a finished million-row output)."""
    if updates["index"].n_unique() == updates.height:
        return updates
    return updates.unique("index", keep="last", maintain_order=True)


def with_outcomes(frame: pl.DataFrame, decisions: pl.DataFrame, *, similarities: bool | None = None
                  ) -> pl.DataFrame:
    """The input rows, in input order, with the extract columns added (replacing any earlier ones): ``error`` in
    its place (added last when the input had none), then :data:`OUTCOME_COLUMNS`, then ``choice_similarities`` when
    a row has similarities (``similarities``: whether a row of the whole file has them, for a batch of it)."""
    base = frame.drop([c for c in (*OUTCOME_COLUMNS, SIMILARITIES) if c in frame.columns])
    joined = base.with_columns(decisions["error"].alias("error"))
    if similarities is None:
        similarities = bool(decisions[SIMILARITIES].is_not_null().any())
    added = [*OUTCOME_COLUMNS, SIMILARITIES] if similarities else list(OUTCOME_COLUMNS)
    return joined.with_columns(decisions.select(added))
