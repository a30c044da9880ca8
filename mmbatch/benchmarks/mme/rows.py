"""MME questions read from text files -> prepared rows, with each image embedded once.

Images are embedded as base64 in the ``image`` column, so the prepared file is self-contained like VLMEvalKit's
``MME.tsv`` and ``infer`` can run on a machine without the release folder. The first question of an image carries
the payload; the second carries a reference to the first row's ``index`` (docs/rules.md §1), which halves the size.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from mmbatch.benchmarks.mme.release_folder import MmeQuestion
from mmbatch.benchmarks.mme.subtasks import part_of
from mmbatch.errors import BadInputError
from mmbatch.media import check_image_bytes, resolve_media
from mmbatch.progress import progress

BENCHMARK = "mme"


def questions_to_rows(questions: list[MmeQuestion], media_root: Path, *, limit: int | None = None,
                      max_pixels: int) -> pl.DataFrame:
    """Number the questions, group them by image and embed each image once.

    Args:
        questions: in the order the rows should have; ``index`` is the position (0-based).
        media_root: every image must lie inside this folder.
        limit: keep only the images of the first ``limit`` questions (both questions of each).
        max_pixels: larger images are refused.

    Raises:
        BadInputError: an image that is missing, outside ``media_root``, corrupt or too large.
    """
    group_of: dict[tuple[str, Path], int] = {}
    g_indices = [group_of.setdefault((q.subtask, q.image_file), index) for index, q in enumerate(questions)]
    keep = list(range(len(questions)))
    if limit is not None:
        kept_groups = set(g_indices[:limit])
        keep = [i for i in keep if g_indices[i] in kept_groups]
    payloads: list[bytes | None] = []
    references: list[str | None] = []
    with progress("reading MME images", total=len(keep), unit="questions") as bar:
        for index in keep:
            question, g_index = questions[index], g_indices[index]
            bar.advance()
            if g_index != index:
                payloads.append(None)
                references.append(str(g_index))  # a reference to the row holding this image's payload
                continue
            payloads.append(image_bytes(question, media_root, index=index, max_pixels=max_pixels))
            references.append(None)
    # polars encodes base64 in native code, several times faster than building the Python strings.
    image = pl.Series("image", payloads, dtype=pl.Binary).bin.encode("base64")
    del payloads  # the raw bytes are not needed any more: lower the peak memory of large folders
    image = image.zip_with(image.is_not_null(), pl.Series(references, dtype=pl.String))
    return pl.DataFrame(
        {
            "index": keep,
            "g_index": [g_indices[i] for i in keep],
            "benchmark": [BENCHMARK] * len(keep),
            "question": [questions[i].question for i in keep],
            "answer": [questions[i].answer for i in keep],
            "category": [questions[i].subtask for i in keep],
            "l2-category": [part_of(questions[i].subtask) for i in keep],
            "image": image,
            "image_name": [questions[i].image_name for i in keep],
        },
        schema={"index": pl.Int64, "g_index": pl.Int64, "benchmark": pl.String, "question": pl.String,
                "answer": pl.String, "category": pl.String, "l2-category": pl.String, "image": pl.String,
                "image_name": pl.String},
    )


def image_bytes(question: MmeQuestion, media_root: Path, *, index: int, max_pixels: int) -> bytes:
    """The bytes of a question's image file, after checking it is inside the root and a real image.

    Raises:
        BadInputError: naming the question file, the row index and the ``image`` column.
    """
    relative = os.path.relpath(question.image_file, media_root)
    path = resolve_media(media_root, relative, source=question.source, index=index, column="image")
    data = path.read_bytes()
    try:
        check_image_bytes(data, max_pixels)
    except ValueError as exc:
        raise BadInputError(f"image {relative!r}: {exc}", path=question.source, index=index, column="image") from exc
    return data
