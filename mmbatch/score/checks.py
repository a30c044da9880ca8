"""Input checks of ``mmbatch score``: which benchmark each row is, unique indices, and ground truth present.

Each failure is a :class:`~mmbatch.errors.BadInputError` naming the file, the row and the column (exit 2).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.answers.frames import has_answer
from mmbatch.answers.scores import SCORE
from mmbatch.benchmarks.registry import benchmark_names, find_benchmark, get_benchmark
from mmbatch.errors import BadInputError

_SHOWN = 5
"""How many offending values an error message lists before ``and N more``."""


def require_columns(frame: pl.DataFrame, path: Path | None) -> None:
    """Fail clearly when the file lacks ``index``, ``extracted`` or ground truth (``answer``, or the ``score`` that
    ``extract`` gave the rows)."""
    if "index" not in frame.columns:
        raise BadInputError("no 'index' column: not an MMBench-style stage file", path=path, column="index")
    if "extracted" not in frame.columns:
        raise BadInputError(
            "no 'extracted' column: run `mmbatch extract` first (add --no-judge to use the rules only)",
            path=path, column="extracted")
    if "answer" not in frame.columns and SCORE not in frame.columns:
        raise BadInputError(
            "no 'answer' column: there is no ground truth to score against (a test split?); "
            "`mmbatch export` writes the official submission file instead", path=path, column="answer")


def resolve_benchmarks(frame: pl.DataFrame, benchmark: str | None, path: Path | None) -> pl.DataFrame:
    """``frame`` with a lower-case ``benchmark`` column, restricted to ``--benchmark`` when given.

    Without a ``benchmark`` column every row is ``--benchmark`` (required then). With one, ``--benchmark`` selects
    its rows. Every remaining benchmark must have a scorer.
    """
    if "benchmark" not in frame.columns:
        if benchmark is None:
            raise BadInputError("the file has no 'benchmark' column: say which with --benchmark", path=path,
                                column="benchmark")
        return frame.with_columns(pl.lit(benchmark.lower()).alias("benchmark"))
    frame = frame.with_columns(lower_case(frame["benchmark"]))
    # looked for in the column: a filter of the frame put every column of a Parquet file's rows (one chunk per row
    # group) into one chunk first, beside the new column (+190 MiB at a million MMBench rows)
    missing = frame["benchmark"].is_null()
    if missing.any():
        if benchmark is None:
            raise BadInputError("empty 'benchmark' cell (give --benchmark to score such rows)", path=path,
                                index=frame["index"].filter(missing)[0], column="benchmark")
        frame = frame.with_columns(pl.col("benchmark").fill_null(benchmark.lower()))
    if benchmark is not None:
        present = sorted(frame["benchmark"].unique().to_list())
        frame = frame.filter(pl.col("benchmark") == benchmark.lower())
        if frame.height == 0:
            raise BadInputError(f"no rows of benchmark {benchmark!r}; the file holds {', '.join(present)}",
                                path=path, column="benchmark")
    for name in frame["benchmark"].unique().sort().to_list():
        if find_benchmark(name) is None:
            first = frame.filter(pl.col("benchmark") == name)["index"][0]
            raise BadInputError(
                f"no scorer for benchmark {name!r}; known: {', '.join(benchmark_names())} "
                "(score an MMBench-style MCQ file with --benchmark mmbench)",
                path=path, index=first, column="benchmark")
    return frame


def lower_case(names: pl.Series) -> pl.Series:
    """``names`` as text in lower case: each distinct name lower-cased once (a million rows name a few benchmarks;
    lower-casing every cell took 0.06-0.1 s), the column itself when every name already is."""
    text = names.cast(pl.String)
    distinct = text.unique().drop_nulls().to_list()
    if all(name == name.lower() for name in distinct):
        return text
    return text.replace_strict({name: name.lower() for name in distinct}, default=None, return_dtype=pl.String)


def check_unique_index(frame: pl.DataFrame, path: Path | None) -> None:
    """Fail when an ``index`` occurs twice within one benchmark and model, naming the duplicates."""
    if frame["index"].n_unique() == frame.height:  # the usual case, one hash pass
        return
    keys = ["benchmark", "model", "index"]
    duplicated = frame.group_by(keys).len().filter(pl.col("len") > 1).sort(keys, nulls_last=True)
    if duplicated.height:
        shown = ", ".join(str(v) for v in duplicated["index"].head(_SHOWN).to_list())
        more = f" and {duplicated.height - _SHOWN} more" if duplicated.height > _SHOWN else ""
        raise BadInputError(f"duplicate index values {shown}{more}: every row needs its own index",
                            path=path, index=duplicated["index"][0], column="index")


def answered_rows(frame: pl.DataFrame, path: Path | None, *, partial: bool = False
                  ) -> tuple[pl.DataFrame, list[str]]:
    """The rows that can be scored, and a warning per split left out for having no ground truth at all.

    ``partial``: a split with answers for some rows only is scored on those rows (``--subset answered``) instead
    of refused; the caller reports the coverage.

    Raises:
        BadInputError: no row of a benchmark has an answer (a test split: use ``mmbatch export``), or a split
            has answers for some rows only and ``partial`` is off.
    """
    answered = has_answer() if "answer" in frame.columns else pl.lit(False)
    if SCORE in frame.columns:  # a kind scores a row without an answer text when it has other ground truth (a
        answered = answered | pl.col(SCORE).is_not_null()  # LLaVA-Bench row's stored reviews of the reference)
    # grouped over the few columns it reads: a group_by over the whole frame first made one chunk of every column
    # of it (+435 MiB at a million MMBench rows)
    marked = frame.select("benchmark", "split", "index", answered.alias("_answered"))
    splits = marked.group_by("benchmark", "split").agg(
        pl.col("_answered").sum().alias("answered"), pl.len().alias("rows"),
        pl.col("index").filter(~pl.col("_answered")).first().alias("first_missing"),
    ).sort("benchmark", "split", nulls_last=True)
    warnings: list[str] = []
    for benchmark, split, n_answered, rows, first_missing in splits.iter_rows():
        if 0 < n_answered < rows and not partial:
            where = f"{benchmark} split {split}" if split is not None else str(benchmark)
            raise BadInputError(f"{rows - n_answered} of {rows} rows of {where} have no answer; score the answered "
                                "rows alone with --subset answered (the coverage is printed and recorded), or give "
                                "the ground truth of the others", path=path, index=first_missing, column="answer")
    for benchmark in splits["benchmark"].unique().sort().to_list():
        of_benchmark = splits.filter(pl.col("benchmark") == benchmark)
        if of_benchmark["answered"].sum() == 0:
            formats = get_benchmark(benchmark).export_formats
            advice = (f"only the benchmark's server can score them; write the submission with `mmbatch export "
                      f"--format {formats[0]} --input {path or 'FILE'} --output SUBMISSION`" if formats
                      else "give the ground truth")
            raise BadInputError(f"the {benchmark} rows have no ground truth in 'answer' (a test split?): {advice}",
                                path=path, column="answer")
        for split, rows in of_benchmark.filter(pl.col("answered") == 0).select("split", "rows").iter_rows():
            warnings.append(f"{benchmark} split {split!r}: {rows} rows without answers are not scored "
                            "(submit them with `mmbatch export`)")
    if int(splits["answered"].sum()) == frame.height:  # the usual case: no copy of the whole table
        return frame, warnings
    return frame.filter(answered), warnings
