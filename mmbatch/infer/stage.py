"""The ``infer`` stage: a prepared file -> a predictions file, resumable and shardable.

Order of work: read and validate the prepared file (a bad file is refused before any model loads), pick the shard's
rows, open the progress journal (refusing earlier progress made with other settings), run only the rows that are
missing or failed, then write the shard's output sorted by ``index``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from mmbatch import __version__
from mmbatch.backends.base import Backend, CountsRows, Result
from mmbatch.backends.registry import get_backend_declaration, image_generators
from mmbatch.errors import BadInputError
from mmbatch.infer.backend_choice import create_backend
from mmbatch.infer.images import store_images
from mmbatch.infer.outputs import (
    PREDICTION_SCHEMA,
    carried_columns,
    finished_frame,
    progress_folder,
    result_records,
    shard_output_path,
)
from mmbatch.infer.requests import RequestBuilder, default_media_root
from mmbatch.infer.row_counts import counts_since
from mmbatch.infer.runner import plan_chunks, prefetched_chunks, run_chunk
from mmbatch.infer.settings import InferOptions, file_fingerprint, recorded_option, resume_settings, run_settings
from mmbatch.infer.summary import MAX_FAILED_SHOWN, InferSummary
from mmbatch.journal import RowJournal
from mmbatch.own_inputs import refuse_writing_over_inputs
from mmbatch.progress import ProgressBar, progress
from mmbatch.schema.columns import PREPARED
from mmbatch.schema.validate import validate_frame
from mmbatch.shards import resolve_shard
from mmbatch.stage_records import InferRecord
from mmbatch.tableio import Table, atomic_path, check_writable, file_format, read_metadata, read_table, write_table

GENERATE_IMAGE = "generate-image"
MEDIA_PATH_COLUMNS = ("image_path", "video_path")
BACKEND_SETTINGS_FILE = "backend.json"
"""Kept in the progress folder so a rerun with nothing left to do need not load the model to describe it."""


def load_prepared(path: Path) -> Table:
    """Read a prepared file and check it against the prepared schema.

    Raises:
        BadInputError: the file is unreadable or violates the schema (every problem is listed).
    """
    table = read_table(path)
    frame, violations = validate_frame(table.frame, PREPARED)
    if violations:
        listed = "; ".join(str(v) for v in violations[:5])
        more = f" (and {len(violations) - 5} more)" if len(violations) > 5 else ""
        raise BadInputError(f"not a valid prepared file: {listed}{more}; see `mmbatch validate {path}`", path=path)
    return Table(frame, table.metadata)


def refuse_image_rows_without_generator(backend: str, todo: pl.DataFrame, input_path: Path) -> None:
    """A backend that cannot make pictures, given only ``generate-image`` rows, is refused before its model loads.

    In a file that also has text rows (all of SEED-Bench-2), the picture rows fail one by one instead (exit 3, with
    the reason in their ``error``): the text rows are still worth answering.

    Raises:
        BadInputError: every row to run is a ``generate-image`` row and the backend is no image generator.
    """
    image_rows = todo.filter(pl.col("mode") == GENERATE_IMAGE)
    if image_rows.height and image_rows.height == todo.height and not get_backend_declaration(backend).image_generator:
        raise BadInputError(f"the {image_rows.height} rows to run are in mode generate-image, which the {backend} "
                            f"backend cannot answer; use --backend {' or '.join(image_generators())}",
                            path=input_path, column="mode")


class BackendSource(Protocol):
    """Where ``infer`` gets a backend it does not own: a run plan hands one model's backend to all its benchmarks
    (:class:`mmbatch.plans.session.ModelSession`), loaded on the first request and closed by the plan."""

    def backend(self, options: InferOptions) -> Backend:
        """The backend for ``options``, loaded on first need."""


def run_infer(options: InferOptions, *, backends: BackendSource | None = None) -> InferSummary:
    """Run (or resume) ``infer`` for the options' shard and write its output.

    Args:
        options: The stage's options.
        backends: Where to get a shared backend (left open at the end); None creates one and closes it.

    Raises:
        BadInputError: invalid prepared file, bad options, or earlier progress with other settings (no ``force``).
    """
    started = time.monotonic()
    file_format(options.output, writing=True)  # before any path is derived from it ('/' has no name)
    shard = resolve_shard(options.shard)
    output = shard_output_path(options.output, shard)
    refuse_writing_over_inputs([options.output, output], [options.input])
    table = load_prepared(options.input)
    check_writable(output)  # before any work: a read-only folder must not be found after hours of inference
    media_root = default_media_root(options.input, table.metadata, options.media_root) if _reads_media_files(
        table.frame) else options.input.parent
    fingerprint = file_fingerprint(options.input)
    settings = resume_settings(options, fingerprint)
    journal = RowJournal(output, settings, force=options.force, settings_key="infer.resume",
                         progress_dir=progress_folder(options.output),
                         finished=() if shard.is_whole else (options.output,), columns=tuple(PREDICTION_SCHEMA),
                         schema=PREDICTION_SCHEMA)

    rows = shard.select(table.frame)
    carried = rows.select(carried_columns(rows.columns))
    done = _done_indices(journal, rows["index"])
    todo = rows.filter(~pl.col("index").is_in(list(done)))
    which = f"{shard.label}: " if shard.label else ""
    _say(f"infer: {which}{rows.height} rows, {len(done)} already done, {todo.height} to run -> {output}")

    backend_settings, tokens = _previous_backend_settings(journal.dir, output), 0
    row_counts: dict[str, Any] = {}
    if todo.height or backend_settings is None:
        refuse_image_rows_without_generator(options.backend, todo, options.input)
        if options.executor == "ray":  # every actor loads its own backend: a plan's shared one stays unused
            backend_settings, tokens, row_counts = _run_on_ray(options, table, todo, journal, media_root)
        else:
            backend_settings, tokens, row_counts = _run_here(options, table, todo, journal, media_root, backends)

    final = _finished_rows(journal, carried, rows.columns)
    metadata = _metadata(table, options, settings, backend_settings, shard=str(shard), shard_rows=rows.height,
                         journal_dir=journal.dir, row_counts=row_counts)
    write_table(final, output, metadata)
    if shard.is_whole:
        journal.close()
    failed = final.filter(pl.col("error").is_not_null())
    return InferSummary(
        output=output, shard=str(shard), shard_label=shard.label, rows=final.height, reused=len(done), ran=todo.height,
        failed=failed.height, output_tokens=tokens, wall_s=time.monotonic() - started,
        failed_examples=tuple(f"{i}: {e}" for i, e in failed.select("index", "error").head(MAX_FAILED_SHOWN).rows()),
    )


def _refuse_unscorable_rows(backend: Backend, todo: pl.DataFrame) -> None:
    """Refuse the run before any row when it has likelihood rows the backend cannot score (exit status 2).

    Failing every such row instead would cost a full pass over the file and leave a predictions file that scores 0.
    """
    likelihood_rows = todo.filter(pl.col("mode") == "likelihood").height
    if not likelihood_rows:
        return
    refusal = backend.likelihood_refusal()
    if refusal is not None:
        raise BadInputError(f"{likelihood_rows} likelihood rows to run with --backend {backend.name}, but {refusal}")


def _done_indices(journal: RowJournal, shard_indices: pl.Series) -> set[int]:
    """Indices of the shard that earlier runs (of any shard count) finished without an error."""
    committed = journal.rows()
    if committed is None:
        return set()
    finished = committed.filter(pl.col("index").is_in(shard_indices.implode()) & pl.col("error").is_null())
    return set(finished["index"].to_list())


def _reads_media_files(frame: pl.DataFrame) -> bool:
    """Whether any row names a media file (``image_path``/``video_path``), so that the media root matters."""
    return any(name in frame.columns and frame[name].is_not_null().any() for name in MEDIA_PATH_COLUMNS)


def _run_here(options: InferOptions, table: Table, todo: pl.DataFrame, journal: RowJournal, media_root: Path,
              backends: BackendSource | None) -> tuple[dict[str, Any], int, dict[str, Any]]:
    """The local executor: run ``todo`` through a backend in this process (its own, or the plan's shared one from
    ``backends``, left open), committing as results come.

    Returns:
        The backend's settings, the tokens generated, and the backend's row counts for these rows.
    """
    try:
        backend = create_backend(options) if backends is None else backends.backend(options)
    except BaseException:
        journal.discard_if_empty()  # a refused model or server leaves no progress folder behind
        raise
    backend_settings = backend.settings()
    _record_backend_settings(journal, backend_settings)
    # A shared backend has counted the rows of earlier files too: this file's counts are the difference.
    counted_before = backend.row_counts() if isinstance(backend, CountsRows) else {}
    try:
        _refuse_unscorable_rows(backend, todo)
        builder = RequestBuilder(table.frame, media_root=media_root, num_frames=options.num_frames,
                                 likelihood_target=options.likelihood_target, max_pixels=options.max_pixels)
        plan = plan_chunks(todo, options.backend_options().chunk_rows())
        with progress(f"infer {options.model}", total=todo.height, unit="rows") as bar:
            commit = _Commits(options, todo, journal, bar)
            for chunk in prefetched_chunks(builder, plan):
                run_chunk(backend, chunk, commit, max_new_tokens=options.max_new_tokens)
        row_counts = counts_since(backend.row_counts(), counted_before) if isinstance(backend, CountsRows) else {}
    finally:
        if backends is None:
            backend.close()
        journal.seal()
    return backend_settings, commit.tokens, row_counts


def _run_on_ray(options: InferOptions, table: Table, todo: pl.DataFrame, journal: RowJournal, media_root: Path
                ) -> tuple[dict[str, Any], int, dict[str, Any]]:
    """The Ray executor: the same rows, plan and commits, answered by an actor pool (:mod:`mmbatch.infer.on_ray`)."""
    from mmbatch.infer.on_ray.pipeline import backend_settings_on_ray, run_on_ray

    try:
        if not todo.height:
            settings = backend_settings_on_ray(options)
            _record_backend_settings(journal, settings)
            return settings, 0, {}
        with progress(f"infer {options.model}", total=todo.height, unit="rows") as bar:
            commit = _Commits(options, todo, journal, bar)
            run = run_on_ray(options, table.frame, todo, media_root, commit=commit,
                             on_settings=lambda settings: _record_backend_settings(journal, settings), say=_say)
    except BaseException:
        journal.discard_if_empty()
        raise
    finally:
        journal.seal()
    if run.retried:
        _say(f"infer: {len(run.retried)} rows were retried after a Ray worker was lost (listed above)")
    assert run.backend_settings is not None  # every row to run came back with the settings of its actor
    return run.backend_settings, commit.tokens, run.row_counts


def _record_backend_settings(journal: RowJournal, settings: dict[str, Any]) -> None:
    with atomic_path(journal.dir / BACKEND_SETTINGS_FILE) as tmp:
        tmp.write_text(json.dumps(settings, default=str), "utf-8")


class _Commits:
    """Commits result lists as they come (either executor): pictures first, then the rows, then the progress bar."""

    def __init__(self, options: InferOptions, todo: pl.DataFrame, journal: RowJournal, bar: ProgressBar) -> None:
        self.options, self.journal, self.bar = options, journal, bar
        self.image_rows = set(todo.filter(pl.col("mode") == GENERATE_IMAGE)["index"].to_list())
        self.tokens = 0
        """Tokens generated so far."""

    def __call__(self, results: list[Result]) -> None:
        if self.image_rows:
            store_images([result for result in results if result.index in self.image_rows], self.options.output)
        # Only the index and the prediction columns are committed, as plain records (a frame is built once per
        # 4,096 commits): the input columns are joined back once, at the end, so a commit costs the same for a
        # 10-column and a 100-column prepared file.
        self.journal.commit_records(result_records(results, self.options.model))
        new_tokens = sum(r.output_tokens or 0 for r in results)
        self.tokens += new_tokens
        self.bar.advance(len(results), tokens=new_tokens)


def _finished_rows(journal: RowJournal, carried: pl.DataFrame, input_columns: list[str]) -> pl.DataFrame:
    """The shard's input rows beside their committed predictions; every row of the shard must have one."""
    committed = journal.rows()
    predictions = (pl.DataFrame(schema=PREDICTION_SCHEMA) if committed is None
                   else committed.select([name for name in PREDICTION_SCHEMA if name in committed.columns]))
    rows = carried.join(predictions.with_columns(pl.lit(True).alias("_committed")), on="index", how="left")
    missing = rows.filter(pl.col("_committed").is_null())
    if missing.height:  # cannot happen unless progress was deleted while running; never write an incomplete output
        raise RuntimeError(f"{missing.height} rows have no committed result (e.g. index {missing['index'].min()!s})")
    return finished_frame(rows.drop("_committed"), input_columns)


def _previous_backend_settings(progress_dir: Path, output: Path) -> dict[str, Any] | None:
    recorded = progress_dir / BACKEND_SETTINGS_FILE
    if recorded.is_file():
        return dict(json.loads(recorded.read_text("utf-8")))
    if output.is_file():
        record = InferRecord.from_metadata(read_metadata(output))
        return record.backend_settings if record is not None and record.backend_settings else None
    return None


def _metadata(table: Table, options: InferOptions, settings: dict[str, Any], backend_settings: dict[str, Any],
              *, shard: str, shard_rows: int, journal_dir: Path, row_counts: dict[str, Any]) -> dict[str, Any]:
    backend_options = options.backend_options()
    record = InferRecord(backend=options.backend, model=backend_options.model,
                         likelihood_target=options.likelihood_target,
                         input_fingerprint=settings["input_fingerprint"], shard=shard,
                         backend_options={key: recorded_option(key, value)
                                          for key, value in dataclasses.asdict(backend_options).items()},
                         backend_settings=backend_settings,
                         revision=options.revision,
                         prompt_templates=sorted(table.frame["prompt_template"].unique().to_list()),
                         mmbatch_version=__version__)
    infer = {
        **run_settings(options),
        **record.to_metadata(),
        "input": str(options.input),
        "input_fingerprint": settings["input_fingerprint"],
        "input_rows": table.frame.height,
        "shard": shard,
        "shard_rows": shard_rows,
        "progress_dir": str(journal_dir),
        # How the backend ran the rows of the last process that ran any (a resumed run counts its own rows only).
        "row_counts": row_counts,
        # Where the rows ran: never part of the resume settings (either executor resumes the other's progress).
        "executor": options.ray.recorded() if options.executor == "ray" else "local",
        "resume": settings,
    }
    return {**table.metadata, "stage": "predictions", "infer": infer}


def _say(line: str) -> None:
    from mmbatch.console import error_console

    error_console.print(line, soft_wrap=True, markup=False, highlight=False)
