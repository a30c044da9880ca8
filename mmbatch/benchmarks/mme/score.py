"""MME scoring: acc, acc+ and score per subtask, perception and cognition totals (docs/rules.md §6).

Per subtask: ``acc = 100 * right questions / questions``, ``acc_plus = 100 * images with both questions right /
images``, ``score = acc + acc_plus``; a total is the sum of its subtasks' scores. The unit (of acc+ and of the
bootstrap) is the image, ``g_index``, within its subtask.

An image must have exactly two questions. When one does not, the subtask still gets ``acc``, but its ``acc_plus``
and ``score`` are left out (they would not be MME's numbers), a ``bad_images`` count is reported, the total covers
the other subtasks (its ``n`` says how many), and a warning names the images.

A total holds only MME's own subtasks, each in the part the official tool puts it in, whatever a row's
``l2-category`` says: a row label could otherwise move a subtask to the other total or count it in both. A subtask MME
does not have is scored on its own and left out of both totals, with a warning naming it.
"""

from __future__ import annotations

import polars as pl

from mmbatch.benchmarks.mme.subtasks import COGNITION, PERCEPTION, SUBTASKS, canonical_subtask, part_of
from mmbatch.errors import BadInputError
from mmbatch.scoring.plan import (
    STRATUM,
    CellLevel,
    MetricSpec,
    Ratio,
    ScorePlan,
    accuracy,
    cell_stat,
    collapse_units,
    count,
    groups_in_order,
)

QUESTIONS_PER_IMAGE = 2
STATS = ("questions", "right", "images", "both_right", "bad_images", "unmatched", "failed")
"""Per-image statistics: questions and right answers, the image itself, whether both answers are right, whether the
image does not have exactly two questions, unmatched and failed rows."""

PARTS = (PERCEPTION, COGNITION)
_SHOWN_IMAGES = 3


class MmeScorer:
    """Scores MME's yes/no rows."""

    def plan(self, rows: pl.DataFrame) -> ScorePlan:
        """One unit per image; cells each subtask and each part's total."""
        images = image_units(rows)
        types = collapse_units(images.with_columns(pl.lit("Overall").alias("overall")),
                               [STRATUM, "subtask", "part", "overall", *STATS])
        subtasks = groups_in_order(types, "subtask", {name: i for i, name in enumerate(SUBTASKS)})
        parts = groups_in_order(types, "part", {name: i for i, name in enumerate(PARTS)})
        bad = set(types.filter(pl.col("bad_images") > 0)["subtask"].to_list())
        unknown = [subtask for subtask in subtasks if part_of(subtask) is None]
        metrics: list[MetricSpec] = []
        for subtask in subtasks:
            metrics.append(accuracy("subtask", subtask, "acc", "right", "questions"))
            if subtask in bad:
                metrics.append(count("subtask", subtask, "bad_images", "bad_images", "images"))
                continue
            metrics += [accuracy("subtask", subtask, "acc_plus", "both_right", "images"),
                        MetricSpec("subtask", subtask, "score", _score_terms(subtask),
                                   n=cell_stat("subtask", subtask, "questions"))]
        for part in parts:
            members = [s for s in subtasks if s not in bad and part_of(s) == part]
            if members:
                terms = tuple(term for subtask in members for term in _score_terms(subtask))
                metrics.append(MetricSpec("total", part, "score", terms, n=len(members)))
        metrics += [count("overall", "Overall", name, name, "questions") for name in ("unmatched", "failed")]
        cells = (CellLevel("subtask", "subtask"), CellLevel("total", "part"), CellLevel("overall", "overall"))
        warnings = _bad_image_warnings(images, bad) + [
            f"{subtask!r} is not an MME subtask: scored on its own, left out of the perception and cognition totals"
            for subtask in unknown]
        return ScorePlan(types, cells, STATS, tuple(metrics), tuple(warnings))


def image_units(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per (subtask, image) with :data:`STATS`, its subtask name, part and stratum.

    Raises:
        BadInputError: a row has no subtask (``category``).
    """
    if "category" not in rows.columns or rows["category"].null_count():
        first = rows["index"][0] if "category" not in rows.columns else rows.filter(
            pl.col("category").is_null())["index"][0]
        raise BadInputError("MME rows need their subtask in 'category'", index=first, column="category")
    image = next((c for c in ("image_name", "image_path") if c in rows.columns), None)
    name = pl.col(image).first() if image else pl.col("g_index").first().cast(pl.String)
    units = rows.group_by("category", "g_index").agg(
        pl.len().cast(pl.Int64).alias("questions"),
        pl.col("hit").sum().alias("right"),
        pl.col("unmatched").sum(),
        pl.col("failed").sum(),
        name.alias("image"),
    )
    canonical = {name.lower(): canonical_subtask(name) for name in SUBTASKS}
    subtask = pl.col("category").str.to_lowercase().replace_strict(canonical, default=pl.col("category"))
    known_part = pl.col("subtask").replace_strict({name: part_of(name) for name in SUBTASKS}, default=None,
                                                  return_dtype=pl.String)
    return units.with_columns(subtask.alias("subtask")).with_columns(
        pl.lit(1, dtype=pl.Int64).alias("images"),
        ((pl.col("questions") == QUESTIONS_PER_IMAGE) & (pl.col("right") == QUESTIONS_PER_IMAGE))
        .cast(pl.Int64).alias("both_right"),
        (pl.col("questions") != QUESTIONS_PER_IMAGE).cast(pl.Int64).alias("bad_images"),
        known_part.alias("part"),
        pl.col("subtask").alias(STRATUM),
    )


def _score_terms(subtask: str) -> tuple[Ratio, ...]:
    """acc + acc+ of one subtask, as two ratio terms."""
    return (Ratio(cell_stat("subtask", subtask, "right"), cell_stat("subtask", subtask, "questions")),
            Ratio(cell_stat("subtask", subtask, "both_right"), cell_stat("subtask", subtask, "images")))


def _bad_image_warnings(images: pl.DataFrame, bad: set[str]) -> list[str]:
    """One warning per subtask with images that do not have exactly two questions, naming a few of them."""
    warnings = []
    for subtask in sorted(bad):
        offending = images.filter((pl.col("subtask") == subtask) & (pl.col("bad_images") == 1)).sort("image")
        shown = ", ".join(f"{image} ({n} questions)" for image, n in
                          offending.select("image", "questions").head(_SHOWN_IMAGES).iter_rows())
        more = f" and {offending.height - _SHOWN_IMAGES} more" if offending.height > _SHOWN_IMAGES else ""
        warnings.append(f"MME subtask {subtask!r}: {offending.height} image(s) do not have exactly two questions: "
                        f"{shown}{more}; its acc_plus and score are left out, and so is it from the total")
    return warnings


SCORER = MmeScorer()
