"""SEED-Bench-2 level 3 (dimensions 25-27): questions answered by generating an image.

The source lists, in ``data_id``, the question's own images first and the four option images last, in letter order
(25: the four options only; 26: the preceding frames, then the options; 27: the four options, whose texts are the
choices). A prepared level-3 row keeps the question's images in ``image_path``, the option images in
``option_image_paths`` and what the generator is given in ``generation_prompt``: the caption for 25 (the text after
"description:"), the question for 26 and 27. ``prepare`` gives these rows the mode ``generate-image``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mmbatch.benchmarks.seedbench.media_files import MediaChecker
from mmbatch.errors import BadInputError

GENERATION_DIMENSIONS = (25, 26, 27)
"""Dimensions whose options are images, chosen by CLIP similarity to the generated image."""
OPTION_COUNT = 4
"""Every level-3 question has four image options, the last four entries of ``data_id``."""
CAPTION_MARKER = "description:"
"""Dimension 25 questions read "Which picture below better fits the description: CAPTION"."""
TEXT_TO_IMAGE = 25


def is_generation_row(record: dict[str, Any]) -> bool:
    """Whether the record is a level-3 question (by dimension, else by ``level``)."""
    dimension = record.get("question_type_id")
    if dimension is not None and str(dimension).strip().isdigit():
        return int(str(dimension).strip()) in GENERATION_DIMENSIONS
    return str(record.get("level") or "").strip() == "L3"


def generation_fields(record: dict[str, Any], dimension: int | None, *, index: int, path: Path,
                      media: MediaChecker) -> dict[str, Any]:
    """``image_path`` (the question's images, or None), ``option_image_paths`` and ``generation_prompt``.

    Raises:
        BadInputError: ``data_id`` has fewer than four entries, or an image is missing or corrupt.
    """
    data_id = record.get("data_id")
    if not (isinstance(data_id, list) and len(data_id) >= OPTION_COUNT
            and all(isinstance(d, str) and d for d in data_id)):
        raise BadInputError(f"a level-3 question needs 'data_id' listing its images and then its {OPTION_COUNT} "
                            f"option images, not {data_id!r}", path=path, index=index, column="option_image_paths")
    inputs, options = data_id[:-OPTION_COUNT], data_id[-OPTION_COUNT:]
    question = str(record.get("question") or "").strip()
    return {
        "image_path": media.images(inputs, index=index) if inputs else None,
        "option_image_paths": json.dumps([media.image(d, index=index, column="option_image_paths") for d in options],
                                         ensure_ascii=False),
        "generation_prompt": caption(question) if dimension == TEXT_TO_IMAGE else question,
    }


def caption(question: str) -> str:
    """The caption of a dimension-25 question: the text after "description:", or the whole question."""
    _, marker, tail = question.partition(CAPTION_MARKER)
    return tail.strip() if marker and tail.strip() else question
