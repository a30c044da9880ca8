"""infer decodes the next chunk's media beside the model or after it, whichever it measured to be the quicker.

Beside wins when the model waits outside Python's lock (a GPU, a server) and pictures take time to decode; after
wins when the backend is Python itself (echo, a cache): the threads then only take turns at the lock
(docs/benchmarks.md, "Decoding beside the model or after it").
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mmbatch.backends.base import Request
from mmbatch.infer.decode_schedule import RETRY_EVERY, SWITCH_MARGIN, TRIAL_CYCLES, DecodeSchedule, DecodeWay
from mmbatch.infer.requests import RequestBuilder
from mmbatch.infer.runner import plan_chunks, prefetched_chunks
from tests.support.prepared_files import prepared_frame

BESIDE, AFTER = DecodeWay.BESIDE, DecodeWay.AFTER


def _cycles(schedule: DecodeSchedule, seconds_per_row: dict[DecodeWay, float], count: int) -> list[DecodeWay]:
    """The ways ``schedule`` picks over ``count`` cycles when each way takes its given time."""
    ways = []
    for _ in range(count):
        way = schedule.next_way()
        schedule.record(way, seconds_per_row[way] * 10, rows=10)
        ways.append(way)
    return ways


def test_after_a_warm_up_each_way_is_tried_then_the_quicker_is_kept_and_the_other_retried_now_and_then() -> None:
    ways = _cycles(DecodeSchedule(), {BESIDE: 2.0, AFTER: 1.0}, 3 * RETRY_EVERY)
    trials = 2 * TRIAL_CYCLES
    assert ways[:1 + trials] == [BESIDE] + [AFTER] * TRIAL_CYCLES + [BESIDE] * TRIAL_CYCLES
    retried = [number for number, way in enumerate(ways) if number > trials and way is BESIDE]
    assert retried == [trials + RETRY_EVERY * k + offset for k in (1, 2)
                       for offset in range(-TRIAL_CYCLES, 0)]


def test_the_warm_up_cycle_counts_for_neither_way() -> None:
    schedule = DecodeSchedule()
    schedule.record(schedule.next_way(), 100.0, rows=10)  # a first batch compiling kernels
    assert schedule.seconds_per_row == {}
    assert _cycles(schedule, {BESIDE: 1.0, AFTER: 2.0}, 2 * TRIAL_CYCLES + 3)[-3:] == [BESIDE] * 3


def test_ways_within_the_margin_stay_beside_and_a_retry_must_beat_the_way_in_use_by_the_margin() -> None:
    close = {BESIDE: 1.0, AFTER: 1.0 - SWITCH_MARGIN / 2}
    schedule = DecodeSchedule()
    _cycles(schedule, close, 1 + 2 * TRIAL_CYCLES)
    assert schedule.in_use is BESIDE  # beside a slow model, guessing after wrongly would cost the most
    assert set(_cycles(schedule, close, 2 * RETRY_EVERY)) == {BESIDE, AFTER}  # retried, never taken over
    assert schedule.in_use is BESIDE


def test_a_retry_that_comes_out_clearly_quicker_takes_over() -> None:
    schedule = DecodeSchedule()
    _cycles(schedule, {BESIDE: 2.0, AFTER: 1.0}, RETRY_EVERY)
    assert schedule.in_use is AFTER
    # the model slowed down (longer prompts, the likelihood rows): decoding beside it now pays
    ways = _cycles(schedule, {BESIDE: 0.5, AFTER: 3.0}, RETRY_EVERY)
    first_retry = ways.index(BESIDE)
    assert set(ways[first_retry:]) == {BESIDE} and schedule.in_use is BESIDE


def test_a_trial_is_the_mean_of_its_cycles() -> None:
    schedule = DecodeSchedule()
    schedule.record(schedule.next_way(), 1.0, rows=10)  # the warm-up
    for seconds in (1.0, 3.0):  # after: 2 s per row on average, one cycle slowed by the machine
        schedule.record(schedule.next_way(), seconds * 10, rows=10)
    assert schedule.seconds_per_row == {AFTER: pytest.approx(2.0)}


class SlowPictures(RequestBuilder):
    """The real builder, each picture taking ``decode_s`` outside Python's lock (as PIL's decoder does), noting
    which thread built each row's request."""

    def __init__(self, *args: Any, decode_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.decode_s = decode_s
        self.threads: list[tuple[int, str]] = []

    def build(self, row: dict[str, Any]) -> Request:
        time.sleep(self.decode_s)
        request = super().build(row)
        self.threads.append((request.index, threading.current_thread().name))
        return request


def _run(tmp_path: Path, *, decode_s: float, model_s: float, schedule: DecodeSchedule | None = None
         ) -> list[str]:
    """Run every chunk of a 40-row file (chunks of 2 rows) through a model taking ``model_s`` per chunk outside
    Python's lock; the thread that built each row, in the order the rows were built."""
    frame = prepared_frame(10, copies=4)
    builder = SlowPictures(frame, media_root=tmp_path, decode_s=decode_s)
    handed_out = []
    for chunk in prefetched_chunks(builder, plan_chunks(frame, 2), schedule):
        assert not chunk.failures
        handed_out += [request.index for request in chunk.requests]
        time.sleep(model_s)
    assert sorted(handed_out) == sorted(frame["index"].to_list())
    assert [index for index, _ in builder.threads] == handed_out  # each row built once, in the order handed out
    return [name for _, name in builder.threads]


def test_a_slow_model_beside_slow_pictures_gets_the_next_chunk_decoded_meanwhile(tmp_path: Path) -> None:
    # beside: a cycle takes max(model, decoding) = 40 ms; after: their sum, 80 ms
    threads = _run(tmp_path, decode_s=0.02, model_s=0.04)
    beside = [name.startswith("mmbatch-media") for name in threads]
    assert beside[:2] == [False, False]  # the first chunk: nothing to decode beside yet
    assert beside[2:4] == [True, True]  # the warm-up cycle
    assert not any(beside[4:4 + 2 * TRIAL_CYCLES])  # after's trial
    # beside's trial, then beside kept: it was the quicker (no retry falls within 20 chunks)
    assert all(beside[4 + 2 * TRIAL_CYCLES:])


@pytest.mark.parametrize("way", list(DecodeWay))
def test_the_way_chosen_is_the_way_the_chunks_are_decoded(tmp_path: Path, way: DecodeWay) -> None:
    class Always(DecodeSchedule):
        def next_way(self) -> DecodeWay:
            return way

    threads = _run(tmp_path, decode_s=0.0, model_s=0.0, schedule=Always())
    assert {name.startswith("mmbatch-media") for name in threads[2:]} == {way is BESIDE}


def test_an_empty_plan_yields_nothing(tmp_path: Path) -> None:
    builder = RequestBuilder(prepared_frame(1), media_root=tmp_path)
    assert list(prefetched_chunks(builder, [])) == []
