"""Feeding rows to a backend in chunks and committing every result list it yields.

Rows are sorted by prompt length (so a batch holds prompts of similar length and pads little), split by mode, and
cut into chunks of a few batches. The media of the next chunk is decoded either in a background thread while the
model works on the current one or after it, whichever the run measures to be the quicker
(:mod:`~mmbatch.infer.decode_schedule`); only one chunk of decoded images is held at a time besides the one being
prepared.
Every list of results the backend yields is committed at once, so a kill loses at most the rows in flight.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import polars as pl

from mmbatch.backends.base import Backend, ImageGenerator, Request, Result
from mmbatch.backends.registry import image_generators
from mmbatch.infer.decode_schedule import DecodeSchedule, DecodeWay
from mmbatch.infer.requests import RequestBuilder, RowError

MODES = ("generate", "likelihood", "generate-image")

Commit = Callable[[list[Result]], None]


@dataclass
class Chunk:
    """Requests ready for the backend, and the rows whose media failed to load."""

    mode: str
    """``generate`` or ``likelihood``."""
    requests: list[Request] = field(default_factory=list)
    """Rows ready for the model."""
    failures: list[Result] = field(default_factory=list)
    """Rows that failed before reaching the model (their ``error`` set)."""


def plan_chunks(todo: pl.DataFrame, size: int) -> list[tuple[str, pl.DataFrame]]:
    """(mode, rows) chunks: generate, likelihood, then generate-image rows, each sorted by the longest prompt of
    the row's group, then group, then index.

    The rows of a group (circular copies, MME's two questions per image) end up side by side, so they reuse one
    decoded image (:class:`~mmbatch.infer.requests.RequestBuilder` keeps the last few) and the ``hf`` backend can
    prefill their common prefix once; groups of similar length still share batches.
    """
    ordered = (todo.with_columns(pl.col("prompt").str.len_chars().max().over("mode", "g_index").alias("_group_len"))
               .sort("_group_len", "g_index", "index"))
    plan = []
    for mode in MODES:
        rows = ordered.filter(pl.col("mode") == mode).drop("_group_len")
        plan += [(mode, rows.slice(start, size)) for start in range(0, rows.height, size)]
    return plan


def build_chunk(builder: RequestBuilder, mode: str, rows: pl.DataFrame) -> Chunk:
    """Decode the media of ``rows``; rows whose media fails become failed results."""
    chunk = Chunk(mode)
    for row in rows.iter_rows(named=True):
        try:
            chunk.requests.append(builder.build(row))
        except RowError as exc:
            chunk.failures.append(Result(int(row["index"]), error=str(exc)))
    return chunk


def prefetched_chunks(builder: RequestBuilder, plan: Sequence[tuple[str, pl.DataFrame]],
                      schedule: DecodeSchedule | None = None) -> Iterator[Chunk]:
    """The chunks of ``plan`` in order; each after the first is decoded beside the model's work on the one before or
    after it, as ``schedule`` chooses from the time each cycle took (a cycle: from handing a chunk out to having the
    next one ready)."""
    schedule = schedule or DecodeSchedule()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mmbatch-media") as pool:
        current = build_chunk(builder, *plan[0]) if plan else None
        for position in range(len(plan)):
            assert current is not None
            following = plan[position + 1] if position + 1 < len(plan) else None
            way = schedule.next_way()
            pending: Future[Chunk] | None = None
            if following is not None and way is DecodeWay.BESIDE:
                pending = pool.submit(build_chunk, builder, *following)
            started = time.monotonic()
            yield current
            if following is None:
                return
            rows = len(current.requests) + len(current.failures) + following[1].height
            current = pending.result() if pending is not None else build_chunk(builder, *following)
            schedule.record(way, time.monotonic() - started, rows)


def run_chunk(backend: Backend, chunk: Chunk, commit: Commit, *, max_new_tokens: int) -> None:
    """Give ``chunk`` to the backend and commit results as they come; rows the backend skipped get an error."""
    for results in chunk_results(backend, chunk, max_new_tokens=max_new_tokens):
        commit(results)


def chunk_results(backend: Backend, chunk: Chunk, *, max_new_tokens: int) -> Iterator[list[Result]]:
    """The result lists of ``chunk`` as they become final: its failed rows first, then each list the backend
    yields, then an error for each row the backend skipped (every row of the chunk gets exactly one result)."""
    if chunk.failures:
        yield chunk.failures
    if not chunk.requests:
        return
    if chunk.mode == "likelihood":
        results = backend.loglikelihood(chunk.requests)
    elif chunk.mode == "generate-image":
        if not isinstance(backend, ImageGenerator):
            others = ", ".join(name for name in image_generators() if name != backend.name)
            yield [Result(request.index, error=f"the {backend.name} backend cannot generate images (mode "
                          f"generate-image); run these rows with --backend {others}")
                   for request in chunk.requests]
            return
        results = backend.generate_images(chunk.requests)
    else:
        results = backend.generate(chunk.requests, max_new_tokens=max_new_tokens)
    expected = {request.index for request in chunk.requests}
    for result_list in results:
        kept = [result for result in result_list if result.index in expected]
        expected.difference_update(result.index for result in kept)
        if kept:
            yield kept
    if expected:
        yield [Result(index, error=f"the {backend.name} backend returned no result for this row")
               for index in sorted(expected)]
