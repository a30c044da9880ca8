"""infer decodes the next chunk's media beside the model only when the model is the slower of the two.

A backend that answers at once (echo, a cache) keeps Python busy itself: a background decoder then only takes turns
with it at the interpreter's lock, which cost ~30 % more CPU per row (docs/benchmarks.md). A slow model (a GPU, a
server) waits outside the lock, and the next chunk's pictures are decoded meanwhile.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from mmbatch.backends.base import Request
from mmbatch.infer.requests import RequestBuilder
from mmbatch.infer.runner import PREFETCH_WHEN_MODEL_TAKES, plan_chunks, prefetched_chunks
from tests.support.prepared_files import prepared_frame


class WatchedBuilder(RequestBuilder):
    """The real builder, noting which thread built each row's request and when."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.built: list[tuple[int, str, float]] = []

    def build(self, row: dict[str, Any]) -> Request:
        request = super().build(row)
        self.built.append((request.index, threading.current_thread().name, time.monotonic()))
        return request


def _run(tmp_path: Path, model_s: float) -> tuple[WatchedBuilder, list[tuple[float, float]]]:
    frame = prepared_frame(8, copies=2)
    builder = WatchedBuilder(frame, media_root=tmp_path)
    plan = plan_chunks(frame, 2)
    spans = []
    for chunk in prefetched_chunks(builder, plan):
        started = time.monotonic()
        assert len(chunk.requests) == 2 and not chunk.failures
        time.sleep(model_s)  # the model's time over the chunk, outside Python's lock as a GPU's or a server's
        spans.append((started, time.monotonic()))
    assert sorted(index for index, _, _ in builder.built) == sorted(frame["index"].to_list())
    return builder, spans


def test_a_slow_model_gets_the_next_chunk_decoded_meanwhile(tmp_path: Path) -> None:
    builder, spans = _run(tmp_path, model_s=0.2)
    threads = [name for _, name, _ in builder.built]
    # The first two chunks are decoded before the model has been timed; every later one beside the model.
    assert set(threads[:4]) == {"MainThread"}
    assert all(name.startswith("mmbatch-media") for name in threads[4:])
    # chunk k+2 was decoded before the model was done with chunk k+1 (in turn, it would be decoded after)
    for (_, _, built_at), (_, ended) in zip(builder.built[4::2], spans[1:], strict=False):
        assert built_at < ended


def test_a_model_that_answers_at_once_gets_its_chunks_decoded_in_turn(tmp_path: Path) -> None:
    builder, _ = _run(tmp_path, model_s=0.0)
    assert {name for _, name, _ in builder.built} == {"MainThread"}
    assert PREFETCH_WHEN_MODEL_TAKES > 1
