"""The ``extract`` stage: a prediction file in, the same rows with their extracted answers out.

Rules first (cheap, exact), then the judge for what the rules leave open, then one atomic write. The file is read a
batch at a time, twice (to decide, then to write each row with its outcome), so that only the rows' decisions are held
in between (docs/extract.md, "Memory"). Progress is committed through :class:`~mmbatch.journal.RowJournal`, and judge
replies through the cache, so a killed run resumes where it stopped and pays for nothing twice.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from mmbatch.answers.judge_prompts import template_hash
from mmbatch.answers.kind import AnswerKind
from mmbatch.answers.letters import CHOICE_RULES
from mmbatch.answers.run_memory import remembered_across_batches
from mmbatch.answers.scores import ROW_SCORES
from mmbatch.backends.library_versions import installed_versions
from mmbatch.benchmarks.registry import answer_kinds
from mmbatch.errors import EXIT_OK, EXIT_ROWS_FAILED, BadInputError
from mmbatch.extract.batched_rules import decide_by_rules
from mmbatch.extract.decisions import SCHEMA, committed_count, committed_outcomes, outcome_frame
from mmbatch.extract.options import ExtractOptions
from mmbatch.extract.outcome import JudgeTask, Outcome
from mmbatch.extract.output_rows import ExtractedRows
from mmbatch.extract.predictions import open_predictions
from mmbatch.extract.rule_pass import kind_settings
from mmbatch.extract.stored_verdicts import check_scores, file_kind_options, stored_outcomes, stored_record
from mmbatch.extract.summary import run_summary
from mmbatch.journal import RowJournal
from mmbatch.own_inputs import refuse_writing_over_inputs
from mmbatch.row_facts import GROUP_FAILED_NOTE, file_sha256
from mmbatch.server_urls import OFFICIAL_BASE_URL, resolved_base_url, without_credentials
from mmbatch.stage_records import ExtractRecord, InferRecord, JudgeRecord
from mmbatch.tableio import check_writable, file_format, write_batches

if TYPE_CHECKING:
    from mmbatch.extract.judge_phase import JudgeSession

RESUME_KEY = "extract_resume"
"""Metadata key of the settings a rerun must match to resume."""
RULE_VARIANT = "vlmevalkit-can_infer"
@dataclass(frozen=True)
class ExtractResult:
    """What a run did."""

    summary: dict[str, Any]
    """Counts recorded in the metadata (rows by method, judge calls, cache hits, tokens, cost)."""
    exit_code: int
    """0, or 3 when some rows failed."""


def run_extract(options: ExtractOptions) -> ExtractResult:
    """Extract every row of ``options.input`` into ``options.output``; resumable.

    The file is read a batch at a time twice: once to decide each row by the rules, once to write it with its
    outcome; between the two only the rows' outcomes are held, and the judge and CLIP decide what the rules left.

    Raises:
        BadInputError: bad input or options, or an unreachable/misconfigured judge (exit 2).
    """
    started = time.monotonic()
    _check_options(options)
    predictions = open_predictions(options.input, benchmark=options.benchmark, model_name=options.model_name)
    metadata = predictions.table.metadata
    if options.stored_verdicts:  # the stored replies are read by the grader that wrote them (import records it)
        options = replace(options, kind_options=file_kind_options(options.kind_options, metadata, options.input))
    infer_record = InferRecord.from_metadata(metadata)
    letter_scoring = infer_record is not None and infer_record.likelihood_target == "letter"
    kinds = answer_kinds(list(predictions.benchmarks))
    with remembered_across_batches():
        rules = decide_by_rules(predictions, options, kinds, letter_scoring=letter_scoring)
        stored_checked: tuple[int, dict[str, int]] = (0, {})
        if options.stored_verdicts:  # the judge's recorded outputs instead of a judge, checked before any write
            tasks = rules.tasks
            stored, unchecked = stored_outcomes(predictions.rows_with_index([task.index for task in tasks]), tasks,
                                                kind_settings(options), metadata, options.input)
            rules.decisions = rules.decisions.updated(predictions.index, outcome_frame(stored.items()))
            rules.drop_tasks()
            stored_checked = _check_stored_scores(ExtractedRows(predictions, rules.decisions, kinds,
                                                                options.reasoning_tags), unchecked, options.input)
        stats = None
        with _judge_session(options) if rules.tasks else nullcontext() as session:
            if session is not None:
                session.ensure_ready(rules.tasks)  # before anything is written: a bad judge leaves no trace
            journal = RowJournal(options.output, _resume_settings(options, kinds), force=options.force,
                                 settings_key=RESUME_KEY, columns=tuple(SCHEMA))
            reused = committed_count(journal, predictions.index)
            # an earlier run's outcomes of the rows the rules leave open (the judge's, CLIP's): the rules decide the
            # others again as they were, so a rerun over a finished output of a million rows reads back the few
            open_rows = predictions.index.filter(rules.decisions.column("extract_method").is_null())
            earlier_rows = committed_outcomes(journal, only=open_rows)
            outcomes: dict[int, Outcome] = {}

            def commit(rows: list[tuple[int, Outcome]]) -> None:
                if rows:
                    journal.commit(outcome_frame(rows))
                    outcomes.update(rows)

            images = rules.image_rows.filter(~pl.col("index").is_in(earlier_rows["index"].implode()))
            clip = _run_clip(images.to_dicts(), options, metadata, commit)
            if session is not None:
                done = set(earlier_rows["index"].to_list())
                tasks = [task for task in rules.tasks if task.index not in done]
                session.decide(tasks, rules.failed_groups | _failed_earlier(rules.tasks, earlier_rows), commit)
                stats = session.stats

        decisions = rules.decisions.updated(predictions.index,
                                            pl.concat([earlier_rows, outcome_frame(outcomes.items())]))
        del earlier_rows  # not held to the end of the write
        methods = decisions.column("extract_method")
        if methods.null_count():  # every route must have decided its rows: a row without a method is a bug
            raise RuntimeError(f"{methods.null_count()} rows were left without an extract method")
        skipped = int((decisions.column("extract_note") == GROUP_FAILED_NOTE).sum())
        summary = run_summary(methods, stats, options.judge_model if _live_judge(options) else None, skipped,
                              time.monotonic() - started, reused=reused,
                              answers_naming_empty_option=rules.answers_naming_empty_option,
                              official_api=_is_official_api(options.judge_base_url))
        earlier = ExtractRecord.from_metadata(metadata)
        settings = _extract_metadata(options, predictions.input_format, journal.settings["input_sha256"], summary,
                                     clip or (earlier.clip if earlier else None), letter_scoring, kinds)
        if options.stored_verdicts:
            settings["stored_verdicts"] = stored_record(metadata, predictions.table.columns, methods,
                                                        *stored_checked, options.input)
        settings["reasoning"] = {"rule": "traces (reasoning_tags) removed before matching; `prediction` kept raw, "
                                         "the matched text in `answer_text`", "rows": rules.traces}
        recorded = {**metadata, "stage": "extracted", "extract": settings, RESUME_KEY: journal.settings}
        output = ExtractedRows(predictions, decisions, kinds, options.reasoning_tags)

        def finished() -> dict[str, Any]:
            # asked for once every batch is made: the stage's time then counts the write (a third of it at 1M rows)
            summary["wall_s"] = round(time.monotonic() - started, 3)
            return {**recorded, ROW_SCORES: output.digest_record()}

        write_batches(output.batches(), options.output, finished)
    journal.close()
    failed = summary["by_method"]["error"]
    return ExtractResult(summary, EXIT_ROWS_FAILED if failed else EXIT_OK)


def _check_stored_scores(output: ExtractedRows, unchecked: dict[int, str], path: Path) -> tuple[int, dict[str, int]]:
    """Every decided row's score against the one the judged file recorded (:func:`check_scores`), batch by batch;
    the rows checked and, by reason, those that could not be."""
    checked, reasons = 0, Counter[str]()
    for k in range(output.predictions.count):
        rows = output.batch(k)
        found, why = check_scores(rows.filter(pl.col("extract_method").is_not_null()), unchecked, path)
        checked += found
        reasons.update(why)
    return checked, dict(reasons.most_common())


def _judge_session(options: ExtractOptions) -> JudgeSession:
    """The judge's session; its client (HTTP, TLS certificates, the cache) is imported only when rows need a judge:
    ~35 ms of every run without one."""
    from mmbatch.extract.judge_phase import JudgeSession

    return JudgeSession(options)


def _run_clip(rows: list[dict[str, Any]], options: ExtractOptions, metadata: dict[str, Any],
              commit: Callable[[list[tuple[int, Outcome]]], None]) -> dict[str, Any] | None:
    """CLIP over the generate-image rows still to decide (loading the model only then); its settings, or None."""
    if not rows:
        return None
    from mmbatch.extract.clip_phase import decide_by_clip
    from mmbatch.extract.clip_ranking import ClipRanker
    from mmbatch.infer.requests import default_media_root
    from mmbatch.optional_packages import missing_package

    media_root = default_media_root(options.input, metadata, options.media_root)
    try:
        ranker = ClipRanker(options.clip_model, batch_size=options.clip_batch_size, device=options.clip_device)
    except ModuleNotFoundError as exc:  # the light image has no torch: exit 2 with the install command
        refusal = missing_package(exc, f"--clip-model (the {len(rows)} generate-image rows)")
        if refusal is None:
            raise
        raise refusal from exc
    decide_by_clip(rows, ranker, predictions=options.input, media_root=media_root, commit=commit)
    return {**ranker.settings(), "model": options.clip_model, "pictures_embedded": ranker.embedded,
            "media_root": str(media_root)}


def _check_options(options: ExtractOptions) -> None:
    file_format(options.output, writing=True)  # before any judge call, not after
    check_writable(options.output)
    if options.stored_verdicts and not options.use_judge:
        raise BadInputError("--stored-verdicts decides what the rules leave open from the judged file's verdicts; "
                            "drop --no-judge (no judge is asked)")
    if options.stored_verdicts and options.unmatched == "random":
        raise BadInputError("--unmatched random draws letters; --stored-verdicts reads the ones VLMEvalKit drew")
    if options.unmatched == "random" and not options.use_judge:
        raise BadInputError("--unmatched random reproduces VLMEvalKit's fallback after the judge; it needs the "
                            "judge (drop --no-judge)")
    refuse_writing_over_inputs([options.output], [options.input])


def _resume_settings(options: ExtractOptions, kinds: dict[str, AnswerKind]) -> dict[str, Any]:
    """Everything that changes the extracted values: a rerun with other values is refused (or --force)."""
    return {
        "input_sha256": file_sha256(options.input),
        "benchmark": options.benchmark,
        # the judge's identity: the model on its server (two servers may serve one model name), its prompts and the
        # temperature of each try
        "judge": {"model": options.judge_model,
                  "server": without_credentials(resolved_base_url(options.judge_base_url)),
                  "tries": judge_tries(kinds)}
        if _live_judge(options) else None,
        "stored_verdicts": options.stored_verdicts,
        "judge_templates": judge_templates_hash(kinds),
        "answer_kinds": kinds_record(kinds, options.kind_options),
        "kind_options": [list(pair) for pair in options.kind_options],
        "choice_rules": options.choice_rules,
        "yes_no_rule": options.yes_no_rule,
        "likelihood_reduction": options.likelihood_reduction,
        "unmatched": options.unmatched,
        "seed": options.seed if options.unmatched == "random" else None,
        "skip_failed_groups": options.skip_failed_groups,
        "clip_model": options.clip_model,
        "reasoning_tags": [list(pair) for pair in options.reasoning_tags],
    }


def _failed_earlier(tasks: list[JudgeTask], earlier: pl.DataFrame) -> set[object]:
    """Judge groups an earlier run's judge outcomes found wrong (on resume, their other rows are not asked)."""
    if earlier.height == 0:
        return set()
    from mmbatch.extract.judge_phase import is_known_wrong

    earlier_by_index = dict(zip(earlier["index"].to_list(), earlier.select("extracted", "extract_method").iter_rows(),
                                strict=True))
    failed: set[object] = set()
    for task in tasks:
        found = earlier_by_index.get(task.index)
        if found is not None and is_known_wrong(Outcome(found[0], found[1]), task.answer):
            failed.add(task.group)
    return failed


def _live_judge(options: ExtractOptions) -> bool:
    """Whether a judge is asked (``--stored-verdicts`` reads recorded verdicts instead)."""
    return options.use_judge and not options.stored_verdicts


def _is_official_api(base_url: str | None) -> bool:
    """Whether the judge is OpenAI's own API, the only server whose prices the cost estimate knows."""
    return base_url is None or base_url.rstrip("/") == OFFICIAL_BASE_URL


def judge_templates_hash(kinds: dict[str, AnswerKind]) -> str:
    """The judge's identity part that comes from the kinds: a hash of the prompt templates of their judges."""
    judges = {kind.judge.label: kind.judge for kind in kinds.values() if kind.judge is not None}
    return template_hash(*(text for label in sorted(judges) for text in judges[label].templates))


def judge_tries(kinds: dict[str, AnswerKind]) -> dict[str, list[float]]:
    """The temperature of each try of each judge the kinds use, by the judge's label (part of the judge's identity)."""
    return {kind.judge.label: list(kind.judge.temperatures) for kind in kinds.values() if kind.judge is not None}


def kinds_record(kinds: dict[str, AnswerKind], chosen: tuple[tuple[str, str], ...] = ()
                 ) -> dict[str, dict[str, Any]]:
    """Each benchmark's answer kind as recorded: its name, version, whether it is binary, its judge's label, the
    value of each ``--kind-option`` it reads (``chosen``, else its default: a later default cannot blur the record),
    and the installed versions of the libraries its rules use (a kind's optional ``libraries``)."""
    given = dict(chosen)
    record: dict[str, dict[str, Any]] = {
        benchmark: {"kind": kind.name, "version": kind.version, "binary": kind.binary,
                    "judge": kind.judge.label if kind.judge is not None else None}
        for benchmark, kind in kinds.items()}
    for benchmark, kind in kinds.items():
        if kind.options:
            record[benchmark]["options"] = {name: given.get(name, values[0]) for name, values in kind.options.items()}
        libraries = getattr(kind, "libraries", ())  # optional: a kind without rules from a library has none
        if libraries:
            record[benchmark]["libraries"] = installed_versions(libraries)
    return record


def _extract_metadata(options: ExtractOptions, input_format: str, input_sha256: str, summary: dict[str, Any],
                      clip: dict[str, Any] | None, letter_scoring: bool, kinds: dict[str, AnswerKind]
                      ) -> dict[str, Any]:
    """What is recorded under ``extract``: the :class:`ExtractRecord` later stages read, and the run's details."""
    record = ExtractRecord(
        input_format=input_format, input_sha256=input_sha256, choice_rules=options.choice_rules,
        yes_no_rule=options.yes_no_rule, likelihood_reduction=options.likelihood_reduction,
        judge=JudgeRecord(options.judge_model, None if options.judge_base_url is None else
                          without_credentials(options.judge_base_url)) if _live_judge(options) else None, clip=clip,
        reasoning_tags=[list(pair) for pair in options.reasoning_tags])
    recorded = record.to_metadata()
    recorded["choice_rules"]["source"] = CHOICE_RULES[options.choice_rules].source
    if recorded["judge"] is not None:
        recorded["judge"] |= {
            "prompt_template_hash": judge_templates_hash(kinds),
            "tries": {kind.judge.label: kind.judge.under(kind_settings(options)).tries_text() for kind in kinds.values()
                      if kind.judge is not None},
            "skip_failed_groups": options.skip_failed_groups,
            "cache": str(options.judge_cache) if options.judge_cache else "beside the output",
        }
    return {
        "input": str(options.input),
        "benchmark": options.benchmark,
        "rule": RULE_VARIANT,
        "unmatched": options.unmatched,
        "seed": options.seed if options.unmatched == "random" else None,
        "counts": summary,
        "likelihood_scored": "letters" if letter_scoring else "option texts",
        "answer_kinds": kinds_record(kinds, options.kind_options),
        "kind_options": dict(options.kind_options),
        **recorded,
    }
