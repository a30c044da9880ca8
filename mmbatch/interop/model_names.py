"""The model name of a file made by another tool, when the file itself does not record one.

Foreign files are named after the run, not the model alone: VLMEvalKit writes ``<model>_<DATASET>.xlsx``
(``vila_13b_CCBench.xlsx``), LLaVA ``mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx``, the MME tool reads a folder
that is often called ``results_txt``. A file's stem as the model name put ``vila_13b_CCBench`` and ``results_txt``
on leaderboards. The name is therefore the stem with the words that name the benchmark, a split, a date or the kind
of file taken off both ends (``vila_13b``, ``llava-v1.5-13b``); when nothing is left (``results_txt``), the same is
tried on the enclosing folders. ``--model`` always wins, and so does a model the file records (VLMEvalKit's
``model`` column, LLaVA's ``model_id``).
"""

from __future__ import annotations

import re
from pathlib import Path

from mmbatch.benchmarks.registry import registered

FILE_WORDS = frozenset({
    "answer", "answers", "eval", "evaluation", "output", "outputs", "prediction", "predictions", "pred", "preds",
    "result", "results", "submission", "tool", "txt", "upload", "jsonl", "json", "xlsx", "tsv",
})
"""Words that say what kind of file it is, not which model made it."""
SPLIT_WORDS = frozenset({"dev", "test", "val", "en", "cn", "img"})
"""Words that name a split, language or part of a benchmark (never ``mini`` or ``lite``: model names end so too)."""
PARENT_LEVELS = 2
"""Enclosing folders tried when the name itself says nothing but the benchmark and the kind of file."""
_DATE = re.compile(r"\d{6,8}")


def model_from_path(path: Path) -> str:
    """The model name that ``path`` (a file or folder from another tool) most likely stands for.

    Returns:
        The stem without benchmark, split, date and file-kind words at either end; the first enclosing folder's
        name treated the same way when the stem has nothing else; the stem itself when no folder has either.
    """
    candidates = [path.stem if path.suffix and not path.is_dir() else path.name]
    candidates += [parent.name for parent in list(path.resolve().parents)[:PARENT_LEVELS] if parent.name]
    for name in candidates:
        model = model_from_name(name)
        if model:
            return model
    return candidates[0]


def model_from_name(name: str) -> str:
    """``name`` without the benchmark, split, date and file-kind words at its ends (``_``-separated); may be empty.

    ``vila_13b_CCBench`` -> ``vila_13b``; ``mmbench_dev_20230712_llava-v1.5-13b_upload`` -> ``llava-v1.5-13b``;
    ``seedbench1_GPT-4V_results`` -> ``GPT-4V``; ``results_txt`` -> ``""``.
    """
    words = name.split("_")
    start, end = 0, len(words)
    while start < end and (taken := _generic_run(words[start:end], at_end=False)):
        start += taken
    while start < end and (taken := _generic_run(words[start:end], at_end=True)):
        end -= taken
    return "_".join(words[start:end])


def _generic_run(words: list[str], *, at_end: bool) -> int:
    """How many words at the start (or end) of ``words`` form one benchmark name (``seed_bench``, ``SEEDBench_IMG``)
    or one generic word, longest first; 0 when none do."""
    for length in range(min(len(words), 4), 0, -1):
        run = words[-length:] if at_end else words[:length]
        joined = "".join(run).lower()
        if _is_benchmark_word(joined):
            return length
        if length == 1 and (joined in FILE_WORDS or joined in SPLIT_WORDS or _DATE.fullmatch(joined)):
            return 1
    return 0


def _is_benchmark_word(word: str) -> bool:
    """A registered benchmark's name, alias or VLMEvalKit dataset name (separators and a version digit aside)."""
    bare = word.replace("-", "").replace(".", "")
    return bare in _benchmark_words() or bare.rstrip("0123456789") in _benchmark_words()


def _benchmark_words() -> frozenset[str]:
    names = {name for benchmark in registered() for name in (*benchmark.names, *benchmark.vlmevalkit_names)}
    return frozenset(name.replace("_", "").replace("-", "") for name in names)
