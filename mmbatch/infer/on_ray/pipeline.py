"""The driver's side of ``infer --executor ray``: the chunks go out as a Ray Data pipeline, result lists come back.

The pipeline is ``chunks -> decode (CPU tasks) -> answer (actor pool)``. The chunks are the local executor's plan
(:func:`~mmbatch.infer.runner.plan_chunks`): the same rows side by side (a group's copies reuse one decoded image and
share their prefix) and the same batches, so the answers and option scores are the local executor's. Decoding runs
in CPU tasks streaming ahead of the actors, so an actor spends its time on the model, not on images. Every output
block holds one result list, and the driver commits each as it arrives: a killed actor, a lost node or a killed
driver loses at most the rows in flight. Ray restarts a dead actor and retries its chunk; the driver logs which
rows are retried (:class:`~mmbatch.infer.on_ray.work.AttemptLedger`).

The driver reads the prepared file (it checks it before anything runs, as the local executor does) and sends each
chunk its rows, plus the rows its ``image`` references point at, wherever they are in the file; media files
(``image_path``, ``video_path``) are read by the decoding tasks under the same media root on every node.
"""

from __future__ import annotations

import os
import pickle
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.backends.base import Result
from mmbatch.errors import BadInputError, MmbatchError
from mmbatch.infer.on_ray.cluster import actor_gpus, joined, shortfall
from mmbatch.infer.on_ray.work import (
    CHUNK,
    LEDGER_NAMESPACE,
    PAYLOAD,
    ActorOutput,
    AttemptLedger,
    BackendActor,
    ChunkRows,
    DecodeSettings,
    decode_chunks,
)
from mmbatch.infer.row_counts import counts_added
from mmbatch.infer.runner import plan_chunks
from mmbatch.infer.settings import InferOptions
from mmbatch.media import MAX_REFERENCE_LENGTH, reference_index

SHOWN_RETRIED = 20
"""Indices listed in one log line about retried rows (the count is always given)."""
MAX_PASSES = 3
"""Pipelines run over the rows that did not come back, before they are left for a rerun (failed, exit 3)."""


@dataclass
class RayRun:
    """What the driver learnt from the actors."""

    backend_settings: dict[str, Any] | None = None
    """The backend's settings, from the first result list (None when no row ran)."""
    row_counts: dict[str, Any] = field(default_factory=dict)
    """The backends' counts over the result lists committed (what one process running the rows once counts)."""
    retried: list[int] = field(default_factory=list)
    """Rows run again because the worker that had them was lost."""


def run_on_ray(options: InferOptions, prepared: pl.DataFrame, todo: pl.DataFrame, media_root: Path, *,
               commit: Callable[[list[Result]], None], on_settings: Callable[[dict[str, Any]], None],
               say: Callable[[str], None]) -> RayRun:
    """Run ``todo`` on the cluster, committing each result list as it arrives.

    Args:
        options: the run's options (``options.ray`` says how to use the cluster).
        prepared: the whole prepared file (``image`` references may point at any row).
        todo: the rows to run.
        media_root: the folder of ``image_path``/``video_path`` files.
        commit: records a result list (the local executor's commit).
        on_settings: called once with the backend's settings, before the first commit.
        say: prints a log line.

    Raises:
        BadInputError: Ray is missing, the backend cannot score the likelihood rows, or an actor refused the
            options (a missing model, a bad backend option), as the local executor would.
    """
    run = RayRun()
    with joined(options.ray) as ray:
        gpus = actor_gpus(ray, options.ray, _tensor_parallel_size(options))
        lacking = shortfall(ray, options.ray, gpus)
        if lacking:
            say(f"infer: warning: {lacking}; Ray waits until the cluster has them (an autoscaler adds nodes)")
        remaining = todo
        for attempt in range(1, MAX_PASSES + 1):
            received = _one_pass(ray, run, options, prepared, remaining, media_root, gpus,
                                 commit=commit, on_settings=on_settings, say=say)
            remaining = remaining.filter(~pl.col("index").is_in(list(received)))
            if not remaining.height:
                break
            indices = remaining["index"].to_list()
            say(f"infer: {len(indices)} rows did not come back (a retried worker returned other rows in their "
                f"place); {'running them again' if attempt < MAX_PASSES else 'they fail: rerun to run them'}: "
                f"index {_listed(indices)}")
        if remaining.height:
            commit([Result(index, error=f"did not come back from the Ray cluster in {MAX_PASSES} passes (its "
                           "workers were lost); rerun to run it again") for index in remaining["index"].to_list()])
    return run


def _one_pass(ray: Any, run: RayRun, options: InferOptions, prepared: pl.DataFrame, todo: pl.DataFrame,
              media_root: Path, gpus: float, *, commit: Callable[[list[Result]], None],
              on_settings: Callable[[dict[str, Any]], None], say: Callable[[str], None]) -> set[int]:
    """One pipeline over ``todo``; the indices that came back.

    Ray retries the chunk of a lost actor, but it matches a retried generator's outputs to the lost attempt's by
    position: when the backend grouped its results differently the second time (a server answers in any order), a
    row can be in an output that Ray drops as already returned. Such rows are run by another pass.
    """
    plan = plan_chunks(todo, options.backend_options().chunk_rows())
    items = _chunk_items(plan, prepared)
    say(f"infer: on Ray: {todo.height} rows in {len(items)} chunks, {options.ray.actors} actors x ({gpus:g} GPU, "
        f"{options.ray.cpus_per_actor:g} CPU), decoding in {options.ray.decode_cpus:g}-CPU tasks")
    ledger = (ray.remote(num_cpus=0)(AttemptLedger)
              .options(name=f"attempts-{os.getpid()}-{uuid.uuid4().hex[:8]}", namespace=LEDGER_NAMESPACE).remote())
    dataset = _dataset(ray, items, options, media_root, gpus, ledger)
    receive = _Receiver(run, options.backend, todo, plan, commit, on_settings, say)
    try:
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=0):
            for number, payload in zip(batch[CHUNK], batch[PAYLOAD], strict=True):
                receive(int(number), pickle.loads(payload))
    except Exception as exc:
        refused = _mmbatch_cause(exc)
        if refused is not None:
            raise refused from exc
        raise
    finally:
        ray.kill(ledger)
    return set().union(*receive.committed.values())


def _listed(indices: list[int]) -> str:
    return ", ".join(map(str, indices[:SHOWN_RETRIED])) + (", ..." if len(indices) > SHOWN_RETRIED else "")


def backend_settings_on_ray(options: InferOptions) -> dict[str, Any]:
    """The backend's settings, from a backend loaded on the cluster (a rerun with nothing left to run whose progress
    kept none: the driver may have no GPU to load the model on)."""
    from mmbatch.infer.on_ray.work import describe_backend

    with joined(options.ray) as ray:
        gpus = actor_gpus(ray, options.ray, _tensor_parallel_size(options))
        task = ray.remote(num_cpus=options.ray.cpus_per_actor, num_gpus=gpus)(describe_backend)
        try:
            settings: dict[str, Any] = ray.get(task.remote(options))
        except Exception as exc:
            refused = _mmbatch_cause(exc)
            if refused is not None:
                raise refused from exc
            raise
    return settings


class _Receiver:
    """Takes the actors' outputs in the order they arrive: commits them, records settings, counts and retries."""

    def __init__(self, run: RayRun, backend: str, todo: pl.DataFrame, plan: list[tuple[str, pl.DataFrame]],
                 commit: Callable[[list[Result]], None], on_settings: Callable[[dict[str, Any]], None],
                 say: Callable[[str], None]) -> None:
        self.run, self.backend, self.todo = run, backend, todo
        self.commit, self.on_settings, self.say = commit, on_settings, say
        self.chunk_rows = {number: frame["index"].to_list() for number, (_, frame) in enumerate(plan)}
        self.committed: dict[int, set[int]] = {}
        self.retried_chunks: set[int] = set()

    def __call__(self, number: int, output: ActorOutput) -> None:
        if output.refusal is not None:
            likelihood_rows = self.todo.filter(pl.col("mode") == "likelihood").height
            raise BadInputError(f"{likelihood_rows} likelihood rows to run with --backend {self.backend}, but "
                                f"{output.refusal}")
        if self.run.backend_settings is None:
            self.run.backend_settings = output.backend_settings
            self.on_settings(output.backend_settings)
        done = self.committed.setdefault(number, set())
        if output.lost_attempt is not None and number not in self.retried_chunks:
            self.retried_chunks.add(number)
            again = [index for index in self.chunk_rows[number] if index not in done]
            self.run.retried.extend(again)
            self.say(f"infer: retrying {len(again)} rows of chunk {number} on {output.worker}: the worker that had "
                     f"them ({output.lost_attempt}) was lost before committing them; index {_listed(again)}")
        # A result list whose rows are all committed already is a chunk that Ray ran again and delivered twice
        # (lineage reconstruction re-executes a task on a live actor): the journal keeps one copy, and its counts
        # are not added again. Counts travel with their result list, so a list that Ray drops (a retried
        # generator's outputs that the lost attempt had returned) takes its counts with it.
        if done.issuperset(result.index for result in output.results):  # a chunk's lists hold its own rows only
            return
        self.run.row_counts = counts_added(self.run.row_counts, output.row_counts)
        self.commit(output.results)
        done.update(result.index for result in output.results)


def _dataset(ray: Any, items: list[dict[str, Any]], options: InferOptions, media_root: Path, gpus: float,
             ledger: Any) -> Any:
    """``chunks -> decode -> answer`` as a Ray Data dataset, one chunk or one result list per block."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the stage has its own progress bar
    # A block is emitted when it reaches this size: 1 byte makes every yielded result list its own block, so it
    # reaches the driver (and is committed) as soon as the backend yields it, not when the chunk is done.
    context.target_max_block_size = 1
    settings = DecodeSettings(media_root=media_root, num_frames=options.num_frames,
                              likelihood_target=options.likelihood_target, max_pixels=options.max_pixels)
    chunks = ray.data.from_items(items, override_num_blocks=max(len(items), 1))
    decoded = chunks.map_batches(decode_chunks, batch_size=1, num_cpus=options.ray.decode_cpus,
                                 fn_kwargs={"settings": settings})
    return decoded.map_batches(BackendActor, batch_size=1, compute=ray.data.ActorPoolStrategy(size=options.ray.actors),
                               num_cpus=options.ray.cpus_per_actor, num_gpus=gpus or None,
                               fn_constructor_kwargs={"options": options, "ledger": ledger})


def _chunk_items(plan: list[tuple[str, pl.DataFrame]], prepared: pl.DataFrame) -> list[dict[str, Any]]:
    """One item per chunk: its number and its pickled :class:`ChunkRows`."""
    sources = _referenced_rows(pl.concat([rows for _, rows in plan]) if plan else prepared.clear(), prepared)
    position = {index: row for row, index in enumerate(sources["index"].to_list())}
    items = []
    for number, (mode, rows) in enumerate(plan):
        own = set(rows["index"].to_list())
        wanted = sorted({position[target] for target in _targets(rows) if target in position and target not in own})
        chunk_rows = pl.concat([rows, sources[wanted].select(rows.columns)]) if wanted else rows
        items.append({CHUNK: number, PAYLOAD: pickle.dumps(ChunkRows(mode, chunk_rows, rows.height))})
    return items


def _referenced_rows(rows: pl.DataFrame, prepared: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``prepared`` that an ``image`` cell of ``rows`` refers to."""
    targets = set(_targets(rows))
    return prepared.filter(pl.col("index").is_in(list(targets))) if targets else prepared.clear()


def _targets(rows: pl.DataFrame) -> list[int]:
    """The indices that the ``image`` reference cells of ``rows`` name."""
    if "image" not in rows.columns:
        return []
    cells = rows.filter(pl.col("image").str.len_chars() <= MAX_REFERENCE_LENGTH)["image"].to_list()
    return [target for target in map(reference_index, cells) if target is not None]


def _tensor_parallel_size(options: InferOptions) -> int:
    return int(getattr(options.backend_options(), "tensor_parallel_size", 1))


def _mmbatch_cause(exc: BaseException) -> MmbatchError | None:
    """The mmbatch error (a refused option, a missing model) that an actor or task raised, under Ray's wrappers."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, MmbatchError):
            return current
        pending += [current.__cause__, current.__context__, getattr(current, "cause", None)]
    return None
