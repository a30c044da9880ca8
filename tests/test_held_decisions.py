"""``HeldDecisions.updated`` against the same updates put into the whole table at once (``with_updates``).

A rerun over the finished output of a file whose rows are all the judge's updates every row, in the file's order
(the case placed without a join); a resumed judge run updates a few rows, in commit order, some of them twice.
"""

from __future__ import annotations

import polars as pl
import pytest

from mmbatch.extract.decisions import SCHEMA, with_updates
from mmbatch.extract.held_decisions import DECIDED, HeldDecisions

ROWS = 23


def _decisions(height: int) -> pl.DataFrame:
    """What the rules decided: every row ``rule``, its letter in ``extracted``."""
    return pl.DataFrame({name: [None] * height for name in DECIDED}, schema=DECIDED).with_columns(
        pl.Series("extracted", [chr(ord("A") + k % 4) for k in range(height)]),
        pl.lit("rule").alias("extract_method"))


def _updates(indices: list[int], method: str = "judge") -> pl.DataFrame:
    return pl.DataFrame({"index": indices, "extracted": [f"judged {k}" for k in range(len(indices))],
                         "extract_method": [method] * len(indices), "judge_model": ["gpt"] * len(indices)},
                        schema={name: SCHEMA[name] for name in ("index", "extracted", "extract_method",
                                                                "judge_model")}
                        ).with_columns(pl.lit(None, dtype=dtype).alias(name) for name, dtype in SCHEMA.items()
                                       if name not in ("index", "extracted", "extract_method", "judge_model")
                                       ).select(list(SCHEMA))


def _held(decisions: pl.DataFrame, rows_per_batch: int) -> HeldDecisions:
    return HeldDecisions([decisions.slice(start, rows_per_batch) for start in range(0, decisions.height,
                                                                                    rows_per_batch)])


def _whole(held: HeldDecisions) -> pl.DataFrame:
    return pl.DataFrame([held.column(name) for name in DECIDED])


INDEX = pl.Series("index", [100 + 3 * k for k in range(ROWS)], dtype=pl.Int64)
CASES = {
    "every row, in the file's order": _updates(INDEX.to_list()),
    "every row, reversed": _updates(INDEX.to_list()[::-1]),
    "a few rows, one twice (the later copy wins), one not in the file": _updates([103, 160, 103, 7, 166]),
    "one row of the last batch": _updates([166]),
}


@pytest.mark.parametrize("rows_per_batch", [1, 5, ROWS, 100])
@pytest.mark.parametrize("case", list(CASES))
def test_updated_equals_the_whole_table_updated(case: str, rows_per_batch: int) -> None:
    decisions = _decisions(ROWS)
    updates = CASES[case]
    held = _held(decisions, rows_per_batch).updated(INDEX, updates)
    expected = with_updates(decisions, INDEX, updates)
    assert _whole(held).equals(expected)
    assert held.height == ROWS
    assert held.has_values_in("judge_model")


def test_what_the_rules_decided_again_changes_nothing() -> None:
    """A finished output's rows put back on the rules' own decisions (a rerun) leave them as they were."""
    decisions = _decisions(ROWS)
    finished = decisions.with_columns(INDEX).select(list(SCHEMA))
    after = _held(decisions, 5).updated(INDEX, finished)
    assert _whole(after).equals(decisions)
    assert not after.has_values_in("judge_model")
    assert [after.batch(k).height for k in range(5)] == [5, 5, 5, 5, 3]


def test_no_updates_is_the_same_decisions() -> None:
    held = _held(_decisions(ROWS), 5)
    assert held.updated(INDEX, _updates([])) is held
