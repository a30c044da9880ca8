"""The ``prepare`` stage: a benchmark's source files -> one prepared stage file with a rendered prompt per row.

Readers (``mmbatch.benchmarks``) read and check their benchmark's format; this stage renders the prompt of every row
with :mod:`mmbatch.prompts` (the same way for every benchmark), checks the result against the ``prepared`` schema and
writes it atomically with the settings recorded in the file's metadata.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.benchmarks import get_reader
from mmbatch.benchmarks.base import DeferredChecks, ReadOptions
from mmbatch.benchmarks.registry import get_benchmark
from mmbatch.errors import BadInputError
from mmbatch.media import DEFAULT_MAX_PIXELS
from mmbatch.own_inputs import refuse_writing_over_inputs
from mmbatch.progress import progress
from mmbatch.prompt_files import TemplateFile, read_template_file, render_template_file
from mmbatch.prompts import TEMPLATES, PromptInput, is_missing, prompt_hash, render
from mmbatch.schema.columns import MODES, PREPARED, option_columns
from mmbatch.schema.validate import validate_frame
from mmbatch.stage_modules import make_callable
from mmbatch.stage_records import PrepareRecord
from mmbatch.tableio import file_format, read_metadata, write_table

PROMPT_COLUMNS = ("prompt", "prompt_hash", "prompt_template", "mode")
"""Columns this stage adds to the reader's rows, in this order, at the end."""


@dataclass(frozen=True)
class PrepareOptions:
    """Settings of one ``mmbatch prepare`` run."""

    benchmark: str
    """``--benchmark``: a name (or alias) registered in :func:`mmbatch.benchmarks.registry.registered`."""
    input: Path
    """The benchmark's file or folder."""
    output: Path
    """The prepared file to write (``.tsv`` or ``.parquet``)."""
    media_root: Path | None = None
    """Folder that image and video paths are relative to."""
    prompt_template: str | None = None
    """A built-in template's name, or a template file (:mod:`mmbatch.prompt_files`); None uses the benchmark's
    default."""
    mode: str | None = None
    """``generate`` or ``likelihood``; None uses the reader's default."""
    circular: bool | None = None
    """Generate circular copies (True), keep only original questions (False), or keep the file as it is (None)."""
    limit: int | None = None
    """Only the first N questions (groups), for dry runs."""
    max_pixels: int = DEFAULT_MAX_PIXELS
    """Images larger than this many pixels are refused."""


@dataclass(frozen=True)
class PrepareSummary:
    """What a ``prepare`` run wrote."""

    output: Path
    """The file written."""
    rows: int
    """Rows written."""
    groups: int
    """Distinct ``g_index`` values."""
    categories: dict[str, int] = field(default_factory=dict)
    """Rows per ``category`` (``(none)`` for rows without one)."""

    def line(self) -> str:
        """The one-line summary printed at the end."""
        per_category = ", ".join(f"{name} {count}" for name, count in self.categories.items())
        return (f"prepared {self.rows} rows in {self.groups} groups -> {self.output}"
                + (f"; rows per category: {per_category}" if per_category else ""))


def prepare(options: PrepareOptions) -> PrepareSummary:
    """Read the benchmark, render every row's prompt, check the rows and write the prepared file.

    Raises:
        BadInputError: bad options or bad input; nothing is written then.
    """
    file_format(options.output, writing=True)
    refuse_writing_over_inputs([options.output], [options.input, options.media_root])
    benchmark = get_benchmark(options.benchmark)
    reader = get_reader(options.benchmark)
    template_file = template_from_file(options.prompt_template)
    if template_file is not None:
        refuse_writing_over_inputs([options.output], [options.prompt_template])
    template = template_file.name if template_file else options.prompt_template or benchmark.default_template
    mode = options.mode or benchmark.default_mode
    if mode not in MODES:
        raise BadInputError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if not options.input.exists():
        raise BadInputError("no such file or folder", path=options.input)
    if options.circular and not benchmark.circular:
        raise BadInputError(f"--circular applies to CircularEval benchmarks; {benchmark.name} scores each question "
                            "once", path=options.input)
    deferred = DeferredChecks()
    read_options = ReadOptions(media_root=options.media_root, circular=options.circular, limit=options.limit,
                               max_pixels=options.max_pixels, deferred_checks=deferred)
    try:
        frame = reader.read(options.input, read_options)
        if benchmark.name != reader.name:
            # A benchmark sharing a reader (ccbench is read by the mmbench reader) is scored and reported as itself.
            frame = frame.with_columns(pl.lit(benchmark.name).alias("benchmark"))
        frame = with_generation_prompts(with_prompts(frame, template, mode, template_file))
        frame, violations = validate_frame(frame, PREPARED)
        if violations:
            raise BadInputError(f"the prepared rows are not valid: {violations[0]}", path=options.input)
    except BadInputError:
        deferred.run()  # the reader met these first: their problem is the one to report, as if they had run then
        raise
    summary = summarize(frame, options.output)
    metadata = {
        **_input_metadata(options.input),
        "stage": "prepared",
        "prepare": {
            **PrepareRecord(benchmark=benchmark.name, benchmark_version=benchmark.version, template=template,
                            mode=mode, media_root=str(effective_media_root(options.input, options.media_root)),
                            rows=summary.rows, groups=summary.groups).to_metadata(),
            "reader": reader.name,
            "input": str(options.input),
            "circular": options.circular,
            "limit": options.limit,
            "max_pixels": options.max_pixels,
            **({"template_file": template_file.metadata()} if template_file else {}),
            "group_sizes": _group_sizes(frame),
            "categories": summary.categories,
        },
    }
    write_table(frame, options.output, metadata, alongside=deferred.run if deferred.checks else None)
    return summary


def effective_media_root(input_path: Path, media_root: Path | None) -> Path:
    """The folder relative media paths were resolved against, as an absolute path for ``infer`` to reuse.

    Readers default to the input folder itself, or the folder holding the input file, when ``--media-root`` is absent.
    """
    if media_root is not None:
        return Path(media_root).resolve()
    return (input_path if input_path.is_dir() else input_path.parent).resolve()


def template_from_file(chosen: str | None) -> TemplateFile | None:
    """The template file ``--prompt-template`` names, or None for a built-in name (or none given).

    A built-in name wins over a file of the same name in the working folder.

    Raises:
        BadInputError: neither a built-in name nor a readable template file.
    """
    if chosen is None or chosen in TEMPLATES:
        return None
    path = Path(chosen)
    try:
        found = path.is_file()
    except OSError as exc:  # a name longer than the file system allows (ENAMETOOLONG), a loop of links
        raise BadInputError(f"the prompt template path cannot be used ({exc.strerror or exc})",
                            path=chosen[:120] + ("..." if len(chosen) > 120 else "")) from None
    if not found:
        raise BadInputError(f"unknown prompt template {chosen!r}: neither a built-in name ({', '.join(TEMPLATES)}) "
                            "nor a template file (.j2/.jinja for Jinja, any other file a Python format string)")
    return read_template_file(path)


def with_prompts(frame: pl.DataFrame, template: str, mode: str,
                 template_file: TemplateFile | None = None) -> pl.DataFrame:
    """``frame`` with ``prompt``, ``prompt_hash``, ``prompt_template`` and ``mode`` rendered for every row, by the
    built-in ``template`` or, when given, by ``template_file`` (``template`` is then its recorded name)."""
    prompts: list[str] = []
    with progress("rendering prompts", total=frame.height, unit="rows") as bar:
        if template_file is not None:
            prompts = render_template_file(template_file, frame)
            bar.advance(len(prompts))
        else:
            for item in prompt_inputs(frame):
                prompts.append(render(template, item))
                if len(prompts) % 10_000 == 0:
                    bar.advance(10_000)
            bar.advance(len(prompts) % 10_000)
    rendered = pl.Series("prompt", prompts, dtype=pl.String)
    return frame.drop(PROMPT_COLUMNS, strict=False).with_columns(
        rendered,
        pl.Series("prompt_hash", [prompt_hash(p) for p in prompts], dtype=pl.String),
        pl.lit(template).alias("prompt_template"),
        pl.lit(mode).alias("mode"),
    )


GENERATION_TEMPLATE = "image-generation"
"""The ``prompt_template`` of ``generate-image`` rows: their prompt is the reader's ``generation_prompt`` as it is."""
GENERATE_IMAGE = "generate-image"


def with_generation_prompts(frame: pl.DataFrame) -> pl.DataFrame:
    """Rows with a ``generation_prompt`` (SEED-Bench-2 level 3) answer by generating an image, whatever ``--mode``
    says for the other rows: their prompt is that text, their mode ``generate-image``."""
    if "generation_prompt" not in frame.columns:
        return frame
    generating = pl.col("generation_prompt").is_not_null()
    frame = frame.with_columns(
        pl.when(generating).then(pl.col("generation_prompt")).otherwise(pl.col("prompt")).alias("prompt"),
        pl.when(generating).then(pl.lit(GENERATION_TEMPLATE)).otherwise(pl.col("prompt_template"))
        .alias("prompt_template"),
        pl.when(generating).then(pl.lit(GENERATE_IMAGE)).otherwise(pl.col("mode")).alias("mode"),
    )
    return frame.with_columns(pl.Series("prompt_hash", [prompt_hash(p) for p in frame["prompt"]], dtype=pl.String))


def prompt_inputs(frame: pl.DataFrame) -> Iterator[PromptInput]:
    """What each row gives a template: question, hint and present options (missing ones skipped, not relabelled)."""
    letters = option_columns(frame.columns)
    hints = frame["hint"] if "hint" in frame.columns else pl.Series("hint", [None] * frame.height, pl.String)
    columns = frame.select(pl.col("question").cast(pl.String), hints.cast(pl.String), *letters)
    for question, hint, *texts in columns.iter_rows():
        options = {letter: text for letter, text in zip(letters, texts, strict=True) if not is_missing(text)}
        yield PromptInput(question=question, hint=None if is_missing(hint) else hint, options=options or None)


def summarize(frame: pl.DataFrame, output: Path) -> PrepareSummary:
    """Rows, groups and rows per category of a prepared frame."""
    categories: dict[str, int] = {}
    if "category" in frame.columns:
        counts = frame["category"].fill_null("(none)").value_counts().sort("category")
        categories = {str(name): int(count) for name, count in counts.iter_rows()}
    return PrepareSummary(output=output, rows=frame.height, groups=frame["g_index"].n_unique(), categories=categories)


def _group_sizes(frame: pl.DataFrame) -> dict[str, int]:
    """Group size -> how many groups have it, e.g. ``{"2": 89, "3": 149, "4": 938}`` for MMBench-dev."""
    sizes = frame.group_by("g_index").len("size").group_by("size").len("groups").sort("size")
    return {str(size): int(n) for size, n in sizes.iter_rows()}


def _input_metadata(path: Path) -> dict[str, Any]:
    """The metadata of an input stage file (a re-prepared file keeps its history); empty for anything else."""
    if not path.is_file() or path.suffix.lower() not in (".tsv", ".parquet"):
        return {}
    try:
        return {k: v for k, v in read_metadata(path).items() if k != "mmbatch_version"}
    except Exception:  # a source file's metadata is a courtesy, never a reason to fail
        return {}


# `from mmbatch import prepare` is the stage function (mmbatch/api.py) even once this module is imported
make_callable(__name__, "mmbatch.prepare:prepare")
