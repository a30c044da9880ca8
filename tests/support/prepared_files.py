"""Small prepared files for the ``infer`` and ``merge`` tests, built the way ``prepare`` writes them.

Each question gets its own image (its size encodes the question, so tests can tell which image a row saw) and
circular copies that refer to it by ``index`` (docs/rules.md §1); prompts have different lengths so that sorting by
prompt length really reorders rows.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import polars as pl
from PIL import Image

from mmbatch.prompts import PromptInput, prompt_hash, render
from mmbatch.tableio import write_table

LETTERS = "ABCD"
OPTION_TEXTS = ["a red square", "a blue circle", "a green tree", "a small cat"]


def png_base64(width: int, height: int, colour: tuple[int, int, int] = (200, 40, 40)) -> str:
    """A PNG of the given size as base64 text."""
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def prepared_frame(questions: int, *, copies: int = 2, mode: str = "generate") -> pl.DataFrame:
    """``questions`` MCQ rows with ``copies`` circular copies each (copy k: index i + k * 1e6, image = ref)."""
    records = []
    for i in range(1, questions + 1):
        for k in range(copies):
            shift = k % len(LETTERS)
            options = {LETTERS[j]: OPTION_TEXTS[(j + shift) % 4] for j in range(4)}
            question = "What is shown?" + " Look closely." * (i % 5)
            item = PromptInput(question=question, hint=None, options=options)
            prompt = render("vlmevalkit", item)
            records.append({
                "index": i + k * 1_000_000, "g_index": i, "benchmark": "mmbench", "question": question,
                "hint": None, **options, "answer": LETTERS[(i + k) % 4], "category": f"cat{i % 3}",
                "l2-category": "perception", "split": "dev",
                "image": png_base64(8 + i, 4 + k) if k == 0 else str(i),
                "prompt": prompt, "prompt_template": "vlmevalkit", "prompt_hash": prompt_hash(prompt),
                "mode": mode, "source": f"src-{i}",
            })
    return pl.DataFrame(records)


def write_prepared(path: Path, frame: pl.DataFrame, metadata: dict | None = None) -> Path:
    """Write ``frame`` as a prepared file with prepare-like metadata."""
    return write_table(frame, path, {"stage": "prepared", "prepare": {"benchmark": "mmbench"}, **(metadata or {})})
