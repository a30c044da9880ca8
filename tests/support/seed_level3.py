"""A SEED-Bench-2 question file with one question of each level-3 dimension (25-27) and their images.

The records are the documented ones of ``../shared/data/seed/seedbench2_doc_examples.json``; their images are drawn
here: distinct random-noise pictures, so that every option image is most similar to itself under any encoder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

LEVEL3_DIMENSIONS = (25, 26, 27)
IMAGE_SIZE = 48


def level3_records(shared_data: Path) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The documented level-3 records and the file's ``question_type`` table."""
    data = json.loads((shared_data / "seed" / "seedbench2_doc_examples.json").read_text("utf-8"))
    records = [q for q in data["questions"] if q["question_type_id"] in LEVEL3_DIMENSIONS]
    return records, data["question_type"]


def draw_image(path: Path, seed: int) -> None:
    """A noise image of its own (seeded), with a coarse colour layout so that downscaling keeps it distinct."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(6, 6, 3), dtype=np.uint8)
    picture = np.kron(coarse, np.ones((IMAGE_SIZE // 6, IMAGE_SIZE // 6, 1), dtype=np.uint8))
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(picture).save(path)


def write_level3_benchmark(folder: Path, shared_data: Path, *, copies: int = 1) -> Path:
    """``folder/seed2_l3.json`` with ``copies`` of each level-3 record and every image it names under ``folder``."""
    records, question_type = level3_records(shared_data)
    questions = []
    for copy in range(copies):
        for record in records:
            questions.append({**record, "question_id": f"{record['question_type_id']}_{copy}"})
    seed = 0
    for record in records:
        for data_id in record["data_id"]:
            if not (folder / data_id).exists():
                draw_image(folder / data_id, seed)
                seed += 1
    path = folder / "seed2_l3.json"
    path.write_text(json.dumps({"questions": questions, "question_type": question_type}), "utf-8")
    return path
