"""SEED-Bench's evaluation dimensions, declared once: names, media kinds, SEED-Bench-2 parts and levels.

From AILab-CVC/SEED-Bench DATASET.md (``question_type``, and the ``subpart``, ``level`` and ``data_type`` of the
documented SEED-Bench-2 records). Readers prefer the names in a question file's own ``question_type`` table; these
tables serve files that have none (result files, SEED-Bench-2-Plus, imports).
"""

from __future__ import annotations

from dataclasses import dataclass

SEED1_DIMENSIONS: dict[int, str] = {
    1: "Scene Understanding", 2: "Instance Identity", 3: "Instance Attributes", 4: "Instance Location",
    5: "Instances Counting", 6: "Spatial Relation", 7: "Instance Interaction", 8: "Visual Reasoning",
    9: "Text Understanding", 10: "Action Recognition", 11: "Action Prediction", 12: "Procedure Understanding",
}
"""SEED-Bench-1 dimension number -> name (current DATASET.md; the 2023 version swapped 3 and 4)."""

SEED1_VIDEO_DIMENSIONS = (10, 11, 12)
"""SEED-Bench-1 dimensions whose questions are about videos; 1-9 are about images."""


@dataclass(frozen=True)
class Seed2Dimension:
    """One SEED-Bench-2 evaluation dimension."""

    name: str
    """The ``question_type`` name."""
    part: str
    """The ``subpart`` the dimension belongs to."""
    level: str
    """The ``level`` that introduces it: L1 (comprehension), L2 (interleaved), L3 (image generation)."""
    data_type: str
    """The ``data_type`` of its questions."""


_SINGLE = ("Single-Image & Text Comprehension", "L1", "Single Image")
_MULTI = ("Multiple-Images & Text Comprehension", "L1", "Multiple Images")
_VIDEO = ("Video & Text Comprehension", "L1", "Video")
_INTERLEAVED = ("Interleaved Image & Text Comprehension", "L2", "Interleaved Image")
_IMAGE_GENERATION = ("Image Generation", "L3", "Image Generation")
_IMAGE_TEXT_GENERATION = ("Image & Text Generation", "L3", "Image & Text Generation")

SEED2_DIMENSIONS: dict[int, Seed2Dimension] = {
    **{dim: Seed2Dimension(SEED1_DIMENSIONS[dim], *_SINGLE) for dim in range(1, 10)},
    10: Seed2Dimension("Celebrity Recognition", *_SINGLE),
    11: Seed2Dimension("Landmark Recognition", *_SINGLE),
    12: Seed2Dimension("Chart Understanding", *_SINGLE),
    13: Seed2Dimension("Visual Referring Expression", *_SINGLE),
    14: Seed2Dimension("Science Knowledge", *_SINGLE),
    15: Seed2Dimension("Emotion Recognition", *_SINGLE),
    16: Seed2Dimension("Visual Mathematics", *_SINGLE),
    17: Seed2Dimension("Difference Spotting", *_MULTI),
    18: Seed2Dimension("Meme Comprehension", *_MULTI),
    19: Seed2Dimension("Global Video Understanding", *_VIDEO),
    20: Seed2Dimension("Action Recognition", *_VIDEO),
    21: Seed2Dimension("Action Prediction", *_VIDEO),
    22: Seed2Dimension("Procedure Understanding", *_VIDEO),
    23: Seed2Dimension("In-Context Captioning", *_INTERLEAVED),
    24: Seed2Dimension("Interleaved Image-Text Analysis", *_INTERLEAVED),
    25: Seed2Dimension("Text-to-Image Generation", *_IMAGE_GENERATION),
    26: Seed2Dimension("Next Image Prediction", *_IMAGE_GENERATION),
    27: Seed2Dimension("Text-Image Creation", *_IMAGE_TEXT_GENERATION),
}
"""SEED-Bench-2 dimension number -> its facts."""

SEED2_DIMENSION_NAMES: dict[int, str] = {dim: facts.name for dim, facts in SEED2_DIMENSIONS.items()}
"""SEED-Bench-2 dimension number -> name."""

SEED2_PARTS: tuple[tuple[str, tuple[int, ...]], ...] = tuple(
    (part, tuple(dim for dim, facts in SEED2_DIMENSIONS.items() if facts.part == part))
    for part in dict.fromkeys(facts.part for facts in SEED2_DIMENSIONS.values())
)
"""SEED-Bench-2 parts in order, each with its dimensions."""

SEED2_LEVELS: tuple[tuple[str, int, int], ...] = (("L1", 1, 22), ("L2", 23, 24), ("L3", 25, 27))
"""(level, first and last dimension it adds); levels are cumulative: L2 covers dims 1-24."""
