"""What runs on the Ray cluster: the decoding of a chunk (CPU tasks), the backend actor, and the attempts ledger.

A chunk travels as pickled bytes, never as columns: the driver sends a :class:`ChunkRows` (the chunk's prepared
rows plus the rows their ``image`` references point at), a decoding task turns it into a
:class:`~mmbatch.infer.runner.Chunk` (requests with their decoded images and frames, and the rows whose media failed),
and an actor answers it, yielding one :class:`ActorOutput` per result list its backend yields. Pickle is what Ray uses
between its own workers anyway; nothing here is read from outside the cluster.

This module imports Ray only inside :class:`BackendActor` (the driver imports it to name the class).
"""

from __future__ import annotations

import json
import os
import pickle
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.backends.base import BATCHES_PER_CHUNK, CountsRows, Result
from mmbatch.infer.requests import RequestBuilder
from mmbatch.infer.row_counts import counts_since
from mmbatch.infer.runner import build_chunk, chunk_results
from mmbatch.infer.settings import InferOptions

CHUNK = "chunk"
"""Column of every stage: the chunk's number in the plan."""
PAYLOAD = "payload"
"""Column of every stage: the pickled :class:`ChunkRows`, :class:`~mmbatch.infer.runner.Chunk` or
:class:`ActorOutput`."""


@dataclass(frozen=True)
class ChunkRows:
    """One chunk of the plan as the driver sends it."""

    mode: str
    """``generate``, ``likelihood`` or ``generate-image``."""
    rows: pl.DataFrame
    """The chunk's rows in plan order, then the rows outside it whose ``image`` payload they refer to."""
    size: int
    """How many of ``rows`` are the chunk's own (the first ones)."""


@dataclass(frozen=True)
class DecodeSettings:
    """What decoding a row needs besides the row (the :class:`~mmbatch.infer.requests.RequestBuilder` options)."""

    media_root: Path
    """Folder of ``image_path``/``video_path`` files: the same path on every node (a shared file system)."""
    num_frames: int
    """Frames sampled from each video."""
    likelihood_target: str
    """``content`` or ``letter``."""
    max_pixels: int
    """Largest image accepted."""


@dataclass
class ActorOutput:
    """One result list, with what the driver needs to know about the actor that made it."""

    results: list[Result]
    """As the backend yielded them (failed rows included)."""
    worker: str
    """``pid N on HOST`` of the actor's process."""
    backend_settings: dict[str, Any]
    """The loaded backend's :meth:`~mmbatch.backends.base.Backend.settings`."""
    row_counts: dict[str, Any] = field(default_factory=dict)
    """What the actor's backend counted (``CountsRows``) while making these results (since its previous output),
    or empty."""
    lost_attempt: str | None = None
    """Set on the outputs of a chunk that an earlier attempt started and never finished: that attempt's worker
    (the chunk is a retry)."""
    refusal: str | None = None
    """Why the backend cannot score the chunk's likelihood rows (the run stops, exit 2); no results then."""


def decode_chunks(batch: dict[str, Any], settings: DecodeSettings) -> dict[str, list[Any]]:
    """Ray Data batch function: each :class:`ChunkRows` of ``batch`` -> its decoded
    :class:`~mmbatch.infer.runner.Chunk` (a row whose media fails becomes a failed result, as in the local run)."""
    decoded = []
    for payload in batch[PAYLOAD]:
        chunk_rows: ChunkRows = pickle.loads(payload)
        builder = RequestBuilder(chunk_rows.rows, media_root=settings.media_root, num_frames=settings.num_frames,
                                 likelihood_target=settings.likelihood_target, max_pixels=settings.max_pixels)
        decoded.append(pickle.dumps(build_chunk(builder, chunk_rows.mode, chunk_rows.rows.head(chunk_rows.size))))
    return {CHUNK: list(batch[CHUNK]), PAYLOAD: decoded}


LEDGER_NAMESPACE = "mmbatch"
"""The Ray namespace of every run's :class:`AttemptLedger`."""


class AttemptLedger:
    """A Ray actor (no resources) that remembers which chunk each backend actor has started and not finished.

    When Ray retries a chunk whose actor died (a killed process, a lost node), the new attempt finds the old one
    still open, so the driver can say which rows are run again and why. It is a named actor
    (``attempts-<driver pid>-<random>`` in the :data:`LEDGER_NAMESPACE` namespace): an operator, or a test that
    kills an actor, can ask it which worker is answering which chunk (:meth:`answering`).
    """

    def __init__(self) -> None:
        self._open: dict[int, str] = {}
        self._sending_last: set[int] = set()

    def begin(self, chunk: int, worker: str) -> str | None:
        """Record that ``worker`` starts ``chunk``; the worker of an attempt that started it and never finished."""
        previous = self._open.get(chunk)
        self._open[chunk] = worker
        self._sending_last.discard(chunk)
        return previous

    def sending_last(self, chunk: int) -> None:
        """Record that the attempt at ``chunk`` sends its last result list now."""
        self._sending_last.add(chunk)

    def finish(self, chunk: int) -> None:
        """Record that ``chunk`` is answered."""
        self._open.pop(chunk, None)
        self._sending_last.discard(chunk)

    def answering(self) -> dict[int, str]:
        """The chunks whose attempt has a result list still to send, each with its worker.

        A worker lost while it answers a chunk makes Ray retry the chunk, and the retry sends at least that list,
        which tells the driver the rows it runs again. After the last list left, a retry's lists are all ones the
        lost attempt had returned: Ray drops them, and no row is run again as far as the file is concerned.
        """
        return {chunk: worker for chunk, worker in self._open.items() if chunk not in self._sending_last}


class BackendActor:
    """Ray Data callable class: one backend, loaded once per actor, answering decoded chunks.

    Args:
        options: the run's options (the backend is created from them as the local executor does).
        ledger: handle of the run's :class:`AttemptLedger`.
    """

    def __init__(self, options: InferOptions, ledger: Any) -> None:
        from mmbatch.infer.backend_choice import create_backend

        self.options = options
        self.ledger = ledger
        self.worker = f"pid {os.getpid()} on {socket.gethostname()}"
        self.backend = create_backend(options)
        self.settings = json.loads(json.dumps(self.backend.settings(), default=str))
        # Each output is one Ray block, which costs ~0.1 s of scheduling on a small machine: result lists are sent
        # once they hold a batch's worth of rows (a batch of hf, 8 single-row results of a server or echo). The
        # grouping depends only on what the backend yields, so a retried attempt groups its outputs the same way.
        self.block_rows = max(options.backend_options().chunk_rows() // BATCHES_PER_CHUNK, 1)
        # The backend's running totals when the previous output left: each output carries the difference, so the
        # driver counts exactly the result lists it commits (a running total would count the work of a list that
        # Ray dropped or delivered twice).
        self.counted = self._counts()

    def __call__(self, batch: dict[str, Any]) -> Iterator[dict[str, list[Any]]]:
        """Answer each chunk of ``batch``, yielding every result list as soon as the backend yields it."""
        import ray

        for number, payload in zip(batch[CHUNK], batch[PAYLOAD], strict=True):
            chunk = pickle.loads(payload)
            lost = ray.get(self.ledger.begin.remote(int(number), self.worker))
            refusal = self.backend.likelihood_refusal() if chunk.mode == "likelihood" and chunk.requests else None
            if refusal is not None:
                yield self._output(number, ActorOutput([], self.worker, self.settings, refusal=refusal))
                continue
            # Every output of a retry says so: Ray drops the ones the lost attempt had already returned (a retried
            # generator's outputs are matched by position), so the first that arrives may be any of them.
            unsent, pending = len(chunk.requests) + len(chunk.failures), []  # every row gets exactly one result
            for results in chunk_results(self.backend, chunk, max_new_tokens=self.options.max_new_tokens):
                pending += results
                if len(pending) >= self.block_rows or len(pending) >= unsent:
                    unsent -= len(pending)
                    if unsent <= 0:
                        ray.get(self.ledger.sending_last.remote(int(number)))
                    yield self._output(number, self._actor_output(pending, lost))
                    pending = []
            if pending:
                yield self._output(number, self._actor_output(pending, lost))
            ray.get(self.ledger.finish.remote(int(number)))

    def _actor_output(self, results: list[Result], lost: str | None) -> ActorOutput:
        now = self._counts()
        since, self.counted = counts_since(now, self.counted), now
        return ActorOutput(results, self.worker, self.settings, since, lost)

    def _counts(self) -> dict[str, Any]:
        return self.backend.row_counts() if isinstance(self.backend, CountsRows) else {}

    @staticmethod
    def _output(number: Any, output: ActorOutput) -> dict[str, list[Any]]:
        return {CHUNK: [int(number)], PAYLOAD: [pickle.dumps(output)]}

    def __del__(self) -> None:
        backend = getattr(self, "backend", None)
        if backend is not None:
            backend.close()


def describe_backend(options: InferOptions) -> dict[str, Any]:
    """Ray task: load the backend and return its settings (for a rerun with no row left and none recorded)."""
    from mmbatch.infer.backend_choice import create_backend

    backend = create_backend(options)
    try:
        return dict(json.loads(json.dumps(backend.settings(), default=str)))
    finally:
        backend.close()
