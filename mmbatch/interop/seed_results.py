"""SEED-Bench result files: lines of ``{"question_id", "prediction"[, "gt_answer"]}``.

The official result files (``evaluate_result/SEED-Bench-*/<model>.json``) are JSON objects one per line, each ending
with a comma, and repeat a few ids; LLaVA's upload files are the same without the commas and the ground truth. The
official numbers count every line, so every line becomes a row: ``index`` is the line's position (unique even when
the id repeats) and ``question_id`` keeps the id. SEED-Bench-2 ids ``<dim>_<n>`` give the dimension; SEED-Bench-1 ids
starting with ``v`` are video questions. ``--questions`` (a SEED-Bench JSON, or a result file with ``gt_answer``)
adds question texts, options, dimensions and ground truth.
"""

from __future__ import annotations

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.interop.json_lines import read_result_lines
from mmbatch.interop.rows import ImportOptions, ImportResult, default_model, finish_rows
from mmbatch.interop.seed_dimensions import SEED2_DIMENSIONS, SEED2_ID, seed1_data_type, seed2_dimension
from mmbatch.interop.seed_questions import SeedQuestions, read_seed_questions

UNKNOWN_QUESTION = "(question text not in the results file; import with --questions SEED-Bench JSON)"
"""``question`` and ``prompt`` of rows whose text is unknown: the schema needs a text, and this one says why."""

SEED_LETTERS = ("A", "B", "C", "D")
"""Every SEED-Bench question has exactly these four choices."""


def unknown_option(letter: str) -> str:
    """The text of an option that exists but whose text the results file lacks.

    An empty option cell means "no such option" (docs/rules.md §1); SEED options always exist, so ``extract`` must
    see them present to accept the recorded letter. The text says plainly that it is not the real one.
    """
    return f"(option {letter}: text not in the results file)"


def detect_benchmark(question_ids: list[str], requested: str | None) -> str:
    """``--benchmark`` when given, else ``seedbench2`` when every id is ``<dim>_<n>``, else ``seedbench``."""
    if requested:
        if requested not in ("seedbench", "seedbench2"):
            raise BadInputError(f"seed-results files are SEED-Bench results; --benchmark {requested!r} must be "
                                "seedbench or seedbench2")
        return requested
    return "seedbench2" if all(SEED2_ID.match(q) for q in question_ids) else "seedbench"


def import_rows(options: ImportOptions) -> ImportResult:
    """Read a result file (every line a row) and join the optional question sources."""
    records = read_result_lines(options.input)
    ids = [str(r["question_id"]) for r in records]
    benchmark = detect_benchmark(ids, options.benchmark)
    frame = pl.DataFrame({
        "index": list(range(len(records))),
        "question_id": ids,
        "prediction": [None if r["prediction"] is None else str(r["prediction"]) for r in records],
        "answer": [None if r.get("gt_answer") is None else str(r["gt_answer"]) for r in records],
    }, schema={"index": pl.Int64, "question_id": pl.String, "prediction": pl.String, "answer": pl.String})
    frame = frame.with_columns(pl.col("index").alias("g_index"), pl.lit(benchmark).alias("benchmark"))
    frame = _with_id_facts(frame, benchmark)
    questions = read_seed_questions(options.questions)
    frame = _join_questions(frame, questions) if questions.by_id else frame
    if "question" not in frame.columns:
        frame = frame.with_columns(pl.lit(UNKNOWN_QUESTION).alias("question"))
    unknown_options = sum(
        frame.height if letter not in frame.columns else int(frame[letter].is_null().sum()) for letter in SEED_LETTERS)
    frame = frame.with_columns(
        (pl.col(letter).fill_null(unknown_option(letter)) if letter in frame.columns
         else pl.lit(unknown_option(letter))).alias(letter)
        for letter in SEED_LETTERS)
    model = default_model(options)
    finished = finish_rows(frame, model=model, path=options.input)
    duplicates = int(finished["question_id"].is_duplicated().sum())
    return ImportResult(finished, {
        "format": "seed-results", "benchmark": benchmark, "model": model, "rows": finished.height,
        "lines_with_repeated_ids": duplicates,
        "ids_not_in_questions": int((~finished["question_id"].is_in(list(questions.by_id))).sum())
        if questions.by_id else None, "with_ground_truth": int(finished["answer"].is_not_null().sum()),
        "prompt_source": "question text" if questions.by_id else "unknown (the results file has no question text)",
        "option_texts_unknown": unknown_options,
    })


def _with_id_facts(frame: pl.DataFrame, benchmark: str) -> pl.DataFrame:
    """What the ids alone say: media kind (SEED-1 ``v`` prefix), or dimension, part and level (SEED-2)."""
    if benchmark == "seedbench":
        # The SEED-Bench-1 reader's coarse ability (l2-category) is the media kind, too.
        data_type = pl.col("question_id").map_elements(seed1_data_type, return_dtype=pl.String)
        return frame.with_columns(data_type.alias("data_type"), data_type.alias("l2-category"))
    dims = [seed2_dimension(q) for q in frame["question_id"]]
    facts = [SEED2_DIMENSIONS.get(d) if d is not None else None for d in dims]
    return frame.with_columns(
        pl.Series("question_type_id", dims, dtype=pl.Int64),
        pl.Series("category", [f.name if f else None for f in facts], dtype=pl.String),
        pl.Series("l2-category", [f.part if f else None for f in facts], dtype=pl.String),
        pl.Series("data_type", [f.data_type if f else None for f in facts], dtype=pl.String),
        pl.Series("level", [f.level if f else None for f in facts], dtype=pl.String),
    )


def _join_questions(frame: pl.DataFrame, questions: SeedQuestions) -> pl.DataFrame:
    """Fill texts, options, dimensions and (where the results lack it) ground truth from the question sources."""
    # Ids the sources do not know keep null facts (no ground truth): the screened SEED-Bench-1 has fewer questions
    # than older upload files, and the scorer counts such rows as unanswerable rather than guessing.
    table = questions.frame()
    joined = frame.join(table, on="question_id", how="left", suffix="_q", maintain_order="left")
    fills = []
    for name in table.columns:
        if name == "question_id" or name + "_q" not in joined.columns:
            continue
        # The results file's own values win (its gt_answer is what the official number was computed with).
        fills.append(pl.coalesce(pl.col(name), pl.col(name + "_q")).alias(name))
    joined = joined.with_columns(fills).drop([c for c in joined.columns if c.endswith("_q")])
    return joined
