"""How the Ray driver counts the backends' rows: each committed result list once, whatever Ray delivers.

The real cluster runs (a killed actor whose chunk Ray retries) are in test_infer_ray.py; here the driver's receiver
is given the deliveries Ray can make, including the one a live cluster makes only under memory pressure (a task
re-executed by lineage reconstruction, its outputs delivered twice).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from mmbatch.backends.base import Result
from mmbatch.infer.on_ray.pipeline import RayRun, _Receiver
from mmbatch.infer.on_ray.work import ActorOutput
from mmbatch.infer.row_counts import counts_added, counts_since


def counts(groups: int, single: int) -> dict[str, Any]:
    return {"prefix_sharing": {"generated": {"groups": groups, "shared_rows": 2 * groups,
                                             "unshared": {"single row": single}}}}


def test_counts_since_and_added_are_inverse_through_nested_dicts() -> None:
    before, now = counts(2, 1), counts(5, 4)
    assert counts_since(now, before) == counts(3, 3)
    assert counts_added(before, counts_since(now, before)) == now
    assert counts_added({}, {"reason": "text", "rows": 2}) == {"reason": "text", "rows": 2}
    assert counts_since({"flag": True}, {"flag": False}) == {"flag": True}  # not a number: the latest value


def receiver() -> tuple[_Receiver, RayRun, list[list[int]]]:
    todo = pl.DataFrame({"index": [1, 2, 3, 4], "mode": ["generate"] * 4})
    run, committed = RayRun(), []
    receive = _Receiver(run, "hf", todo, [("generate", todo)], lambda results: committed.append(
        [result.index for result in results]), lambda settings: None, lambda line: None)
    return receive, run, committed


def output(indices: list[int], counted: dict[str, Any], worker: str = "pid 1 on host",
           lost: str | None = None) -> ActorOutput:
    return ActorOutput([Result(index, prediction="a") for index in indices], worker, {"model": "m"}, counted, lost)


def test_a_result_list_delivered_twice_is_committed_and_counted_once() -> None:
    receive, run, committed = receiver()
    receive(0, output([1, 2], counts(1, 0)))
    receive(0, output([1, 2], counts(1, 0)))  # the same chunk's list again, from a re-executed task
    receive(0, output([3, 4], counts(0, 2)))
    assert committed == [[1, 2], [3, 4]]
    assert run.row_counts == counts(1, 2)


def test_a_retried_chunk_adds_only_the_lists_that_arrive() -> None:
    """The lost attempt delivered rows 1-2; the retry's first list (rows 1-2) is dropped by Ray, its second
    arrives: the counts are the two delivered lists', as one process running the chunk once counts."""
    receive, run, committed = receiver()
    receive(0, output([1, 2], counts(1, 0), worker="pid 1 on host"))
    receive(0, output([3, 4], counts(0, 2), worker="pid 2 on host", lost="pid 1 on host"))
    assert committed == [[1, 2], [3, 4]]
    assert run.row_counts == counts(1, 2) and run.retried == [3, 4]
