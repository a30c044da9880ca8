"""What a SEED-Bench-2 question id ``<dimension>_<n>`` tells about its row: dimension name, part, level, media kind.

From the SEED-Bench-2 JSON's ``question_type`` map and its per-question ``subpart``, ``level`` and ``data_type``
fields (AILab-CVC/SEED-Bench DATASET.md). SEED-Bench-1 ids carry no dimension; only their ``v`` prefix (video) does.
"""

from __future__ import annotations

import re

from mmbatch.benchmarks.seedbench.dimensions import SEED2_DIMENSIONS, Seed2Dimension

SEED2_ID = re.compile(r"^(\d+)_(\d+)$")
"""A SEED-Bench-2 question id: dimension number, underscore, running number."""

__all__ = ["SEED2_DIMENSIONS", "SEED2_ID", "Seed2Dimension", "seed1_data_type", "seed2_dimension"]





def seed2_dimension(question_id: str) -> int | None:
    """The dimension number of a SEED-Bench-2 id (``"9_85"`` -> 9), or None for any other id."""
    match = SEED2_ID.match(question_id)
    return int(match.group(1)) if match else None


def seed1_data_type(question_id: str) -> str:
    """SEED-Bench-1: ids starting with ``v`` are video questions, all others image questions."""
    return "video" if question_id.startswith("v") else "image"
