"""When to decode the next chunk's media: beside the model, or after it. Decided by timing both.

Beside the model (a background thread) wins when the model waits outside Python's lock (a GPU, a slow server) while
the pictures decode. After it (in the main thread) wins when the backend is Python itself (``echo``, a cache): the
two threads then only take turns at the lock, and every hand-over costs (a journal write took 27 µs of CPU beside a
decoder, 1.4 µs alone; 100K echo rows took 20-35 % more CPU decoded beside). In between, the two ways come within a
few per cent of each other (photo-sized pictures, echo or a server at concurrency 16), and which one wins depends on
the machine. A rule of thumb ("decode beside when the model is slower than twice the decoding") was tried and
reverted: it is blind to where the model's time goes. So the run times each way over whole cycles (the model and
the commits of one chunk, then the wait until the next chunk is decoded), keeps the quicker, and tries the other
again now and then, since the model's speed and the pictures change along a run (rows are sorted by prompt length,
modes come one after the other). bench/bench_decode_schedule.py measures it.
"""

from __future__ import annotations

import statistics
from collections import deque
from enum import Enum


class DecodeWay(Enum):
    """Where the next chunk's media is decoded."""

    BESIDE = "beside the model"
    AFTER = "after the model"


TRIAL_CYCLES = 2
"""Cycles a way is tried for at a time: the figure of a trial is their mean, so one cycle slowed by the machine does not
decide alone."""
RETRY_EVERY = 32
"""The way not in use is tried again during the last :data:`TRIAL_CYCLES` cycles of every this many: at most 1/16 of
the difference between the ways is the price of noticing that the other way has become the quicker."""
SWITCH_MARGIN = 0.05
"""The way not in use takes over only when its trial came out this much quicker: ways closer than that are within
the noise of a few cycles, and either will do."""
RECENT_CYCLES = 8
"""The way in use is judged by the median of its last this many cycles: a cycle that did more than its share (the
journal sealing a segment took ~10x a cycle's time every 8,192 rows) must not hand the choice to the other way."""


class DecodeSchedule:
    """Chooses the way for each cycle: a warm-up, a trial of each way, then the quicker, with the other tried again
    now and then."""

    def __init__(self) -> None:
        self.cycles = 0
        """Cycles recorded, the warm-up included."""
        self.in_use: DecodeWay | None = None
        """The way chosen; None until both have been tried."""
        self._recent: dict[DecodeWay, deque[float]] = {}
        """Seconds per row of each way's latest cycles: of its last trial, or the last :data:`RECENT_CYCLES` in use."""

    @property
    def seconds_per_row(self) -> dict[DecodeWay, float]:
        """Each way's figure: the median of its latest cycles."""
        return {way: statistics.median(figures) for way, figures in self._recent.items() if figures}

    def next_way(self) -> DecodeWay:
        """The way to decode the next chunk.

        The first cycle is a warm-up (a first batch compiles kernels, a first request opens connections), decoded
        beside and timed for neither way; then after and beside are tried for :data:`TRIAL_CYCLES` cycles each;
        from then on the quicker is used, except for a trial of the other at the end of every :data:`RETRY_EVERY`
        cycles.
        """
        trial = self._trial()
        if trial is not None:
            return trial
        assert self.in_use is not None
        return self.in_use

    def record(self, way: DecodeWay, seconds: float, rows: int) -> None:
        """Note that a cycle decoded ``way`` took ``seconds`` for ``rows`` rows (the chunk the model had and the
        chunk decoded meanwhile or after)."""
        trial = self._trial()
        starts_trial = trial is not None and trial is not self._trial_at(self.cycles - 1)
        self.cycles += 1
        if self.cycles == 1 or rows <= 0:
            return  # the warm-up, or a cycle with nothing to measure
        if starts_trial or way not in self._recent:
            self._recent[way] = deque(maxlen=RECENT_CYCLES)  # a trial is judged on its own cycles
        self._recent[way].append(seconds / rows)
        if trial is None or self._trial() is way:
            return  # the way in use goes on, or the trial does
        challenger = way
        if self.in_use is None:
            if len(self._recent) < len(DecodeWay):
                return
            # Both tried: beside unless after is clearly the quicker (beside a slow model, guessing after wrongly
            # would cost the most).
            self.in_use, challenger = DecodeWay.BESIDE, DecodeWay.AFTER
        figures = self.seconds_per_row
        if challenger is not self.in_use and figures[challenger] < (1 - SWITCH_MARGIN) * figures[self.in_use]:
            self.in_use = challenger

    def _trial(self) -> DecodeWay | None:
        """The way on trial at the current cycle, the warm-up included; None when the way in use goes on."""
        return self._trial_at(self.cycles)

    def _trial_at(self, cycle: int) -> DecodeWay | None:
        if cycle == 0:
            return DecodeWay.BESIDE
        if cycle <= 2 * TRIAL_CYCLES:
            return DecodeWay.AFTER if cycle <= TRIAL_CYCLES else DecodeWay.BESIDE
        if (cycle - 2 * TRIAL_CYCLES) % RETRY_EVERY >= RETRY_EVERY - TRIAL_CYCLES:
            assert self.in_use is not None
            return DecodeWay.AFTER if self.in_use is DecodeWay.BESIDE else DecodeWay.BESIDE
        return None
