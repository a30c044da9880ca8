"""What a SEED-Bench-2 question id ``<dimension>_<n>`` tells about its row: dimension name, part, level, media kind.

From the SEED-Bench-2 JSON's ``question_type`` map and its per-question ``subpart``, ``level`` and ``data_type``
fields (AILab-CVC/SEED-Bench DATASET.md). SEED-Bench-1 ids carry no dimension; only their ``v`` prefix (video) does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SEED2_ID = re.compile(r"^(\d+)_(\d+)$")
"""A SEED-Bench-2 question id: dimension number, underscore, running number."""


@dataclass(frozen=True)
class Seed2Dimension:
    """One SEED-Bench-2 evaluation dimension."""

    name: str
    """The ``question_type`` name."""
    part: str
    """The ``subpart`` the dimension belongs to."""
    level: str
    """The question's ``level``: L1 (comprehension), L2 (interleaved), L3 (image generation)."""
    data_type: str | None
    """The ``data_type`` of its questions; None where the question files disagree or are not documented."""


_SINGLE = "Single-Image & Text Comprehension"
_MULTI = "Multiple-Images & Text Comprehension"
_VIDEO = "Video & Text Comprehension"
_INTERLEAVED = "Interleaved Image & Text Comprehension"

SEED2_DIMENSIONS: dict[int, Seed2Dimension] = {
    1: Seed2Dimension("Scene Understanding", _SINGLE, "L1", "Single Image"),
    2: Seed2Dimension("Instance Identity", _SINGLE, "L1", "Single Image"),
    3: Seed2Dimension("Instance Attributes", _SINGLE, "L1", "Single Image"),
    4: Seed2Dimension("Instance Location", _SINGLE, "L1", "Single Image"),
    5: Seed2Dimension("Instances Counting", _SINGLE, "L1", "Single Image"),
    6: Seed2Dimension("Spatial Relation", _SINGLE, "L1", "Single Image"),
    7: Seed2Dimension("Instance Interaction", _SINGLE, "L1", "Single Image"),
    8: Seed2Dimension("Visual Reasoning", _SINGLE, "L1", "Single Image"),
    9: Seed2Dimension("Text Understanding", _SINGLE, "L1", "Single Image"),
    10: Seed2Dimension("Celebrity Recognition", _SINGLE, "L1", "Single Image"),
    11: Seed2Dimension("Landmark Recognition", _SINGLE, "L1", "Single Image"),
    12: Seed2Dimension("Chart Understanding", _SINGLE, "L1", "Single Image"),
    13: Seed2Dimension("Visual Referring Expression", _SINGLE, "L1", "Single Image"),
    14: Seed2Dimension("Science Knowledge", _SINGLE, "L1", "Single Image"),
    15: Seed2Dimension("Emotion Recognition", _SINGLE, "L1", "Single Image"),
    16: Seed2Dimension("Visual Mathematics", _SINGLE, "L1", "Single Image"),
    17: Seed2Dimension("Difference Spotting", _MULTI, "L1", "Multiple Images"),
    18: Seed2Dimension("Meme Comprehension", _MULTI, "L1", "Multiple Images"),
    19: Seed2Dimension("Global Video Understanding", _VIDEO, "L1", "Video"),
    20: Seed2Dimension("Action Recognition", _VIDEO, "L1", "Video"),
    21: Seed2Dimension("Action Prediction", _VIDEO, "L1", "Video"),
    22: Seed2Dimension("Procedure Understanding", _VIDEO, "L1", "Video"),
    23: Seed2Dimension("In-Context Captioning", _INTERLEAVED, "L2", "Interleaved Image"),
    24: Seed2Dimension("Interleaved Image-Text Analysis", _INTERLEAVED, "L2", "Interleaved Image"),
    25: Seed2Dimension("Text-to-Image Generation", "Image Generation", "L3", None),
    26: Seed2Dimension("Next Image Prediction", "Image & Text Generation", "L3", None),
    27: Seed2Dimension("Text-Image Creation", "Image & Text Generation", "L3", None),
}
"""SEED-Bench-2 dimension number -> its facts."""


def seed2_dimension(question_id: str) -> int | None:
    """The dimension number of a SEED-Bench-2 id (``"9_85"`` -> 9), or None for any other id."""
    match = SEED2_ID.match(question_id)
    return int(match.group(1)) if match else None


def seed1_data_type(question_id: str) -> str:
    """SEED-Bench-1: ids starting with ``v`` are video questions, all others image questions."""
    return "video" if question_id.startswith("v") else "image"
