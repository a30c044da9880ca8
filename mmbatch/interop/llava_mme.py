"""LLaVA's MME answers joined with the MME questions, as LLaVA's ``convert_mme_for_submission.py`` does.

LLaVA asks each MME question with "Answer the question using a single word or phrase." in place of the official
"Please answer yes or no."; its answer ids are ``<subtask>/<image file>`` (shared by the two questions of an image).
The official question is recovered with LLaVA's own rule: drop the LLaVA instruction, strip, append
" Please answer yes or no." and, when that is not a known question, the double-space variant (7 colour questions
are written so). Ground truth comes from an MME question folder (the eval tool's ``questions_template`` or any
filled ``<subtask>.txt`` folder); LLaVA's ``llava_mme_questions.jsonl`` adds the subtask and image of each line.
"""

from __future__ import annotations

from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.benchmarks.mme.tool_files import SUBTASK_PART, GroundTruth, read_ground_truth
from mmbatch.errors import BadInputError
from mmbatch.interop.json_lines import read_jsonl
from mmbatch.row_facts import group_index

LLAVA_INSTRUCTION = "Answer the question using a single word or phrase."
MME_INSTRUCTION = "Please answer yes or no."

def official_question(prompt: str, subtask: str, image: str, truth: GroundTruth) -> str:
    """The official MME question behind a LLaVA prompt (LLaVA's conversion rule, see the module docstring)."""
    question = prompt
    if LLAVA_INSTRUCTION in question:
        question = question.replace(LLAVA_INSTRUCTION, "").strip()
    if MME_INSTRUCTION not in question:
        question = f"{question} {MME_INSTRUCTION}"
        if truth and (subtask, image, question) not in truth:
            question = question.replace(f" {MME_INSTRUCTION}", f"  {MME_INSTRUCTION}")
    return question


def question_records(paths: list[Path]) -> dict[tuple[str, str], deque[dict[str, Any]]]:
    """LLaVA question lines keyed by (question_id, text), in file order (ids repeat: two questions per image)."""
    keyed: dict[tuple[str, str], deque[dict[str, Any]]] = defaultdict(deque)
    for path in paths:
        for record in read_jsonl(path, ("question_id", "text")):
            keyed[(str(record["question_id"]), str(record["text"]))].append(record)
    return keyed


def mme_frame(answers: list[dict[str, Any]], folders: list[Path], question_files: list[Path],
              path: Path) -> pl.DataFrame:
    """Predictions rows for LLaVA's MME answers: official question, ground truth (when a folder is given), subtask.

    ``index`` is the answer's line position; ``g_index`` pairs the questions of an image by MME's rule
    (:func:`mmbatch.row_facts.group_index`).

    Raises:
        BadInputError: an answer whose subtask is unknown, or whose question is not in the question folder.
    """
    truth: GroundTruth = {}
    for folder in folders:
        truth.update(read_ground_truth(folder))
    asked = question_records(question_files)
    rows: list[dict[str, Any]] = []
    for position, answer in enumerate(answers):
        qid, prompt = str(answer["question_id"]), str(answer["prompt"])
        source = asked[(qid, prompt)].popleft() if asked.get((qid, prompt)) else {}
        subtask = str(source.get("category") or qid.split("/")[0])
        image = str(source.get("image") or qid).split("/")[-1]
        if subtask not in SUBTASK_PART:
            raise BadInputError(f"answer line {position + 1}: '{subtask}' is not an MME subtask", path=path,
                                column="question_id")
        question = official_question(prompt, subtask, image, truth)
        if truth and (subtask, image, question) not in truth:
            raise BadInputError(f"answer line {position + 1}: question {question!r} of {subtask}/{image} is not in "
                                "the MME question folder", path=path, column="prompt")
        rows.append({
            "index": position, "benchmark": "mme",
            "question": question, "answer": truth.get((subtask, image, question)), "category": subtask,
            "l2-category": SUBTASK_PART[subtask], "prompt": prompt, "image_name": image,
            "prediction": answer.get("text"), "model": answer.get("model_id"),
        })
    frame = pl.DataFrame(rows, schema={name: pl.String for name in rows[0]} | {"index": pl.Int64})
    return frame.with_columns(group_index(frame.columns, "image-pair"))
