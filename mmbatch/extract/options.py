"""The settings of one ``mmbatch extract`` run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_JUDGE_MODEL = "gpt-4o-mini"
"""VLMEvalKit's current default judge. ``gpt-3.5-turbo-0125`` reproduces the 2024-2026 MMBench leaderboard."""
THINK_TAGS: tuple[tuple[str, str], ...] = (("<think>", "</think>"),)
"""The default ``--reasoning-tags``: DeepSeek-R1, Qwen3, QwQ/QVQ, GLM-4.1V and most open reasoning models write
them."""
UNMATCHED_POLICIES = ("none", "random")
"""``--unmatched``: leave judge-unmatched rows empty (default), or VLMEvalKit's seeded random letter."""


@dataclass(frozen=True)
class ExtractOptions:
    """Everything ``mmbatch extract`` was asked to do."""

    input: Path
    """Prediction file: an mmbatch ``infer`` output, or a VLMEvalKit/LLaVA prediction file (with ``benchmark``)."""
    output: Path
    """Where the extracted file goes (``.tsv`` or ``.parquet``)."""
    benchmark: str | None = None
    """Benchmark name for files without a ``benchmark`` column (VLMEvalKit/LLaVA files)."""
    model_name: str | None = None
    """Model name for files without a ``model`` column; default: read from the input file's name
    (:func:`mmbatch.interop.model_names.model_from_path`)."""
    use_judge: bool = True
    """Ask the LLM judge about answers the rules cannot match; False is the explicit rules-only mode."""
    judge_model: str = DEFAULT_JUDGE_MODEL
    """The judge's model name on its server."""
    judge_base_url: str | None = None
    """OpenAI-compatible server of the judge; None means the official API."""
    judge_cache: Path | None = None
    """SQLite cache of judge replies; None means ``mmbatch-judge-cache.sqlite`` beside the output."""
    concurrency: int = 16
    """Judge requests in flight."""
    request_timeout_s: float = 60.0
    """Seconds before one judge request times out."""
    max_retries: int = 5
    """Retries of one judge request on 429, 5xx, timeouts and garbage."""
    retry_backoff_s: float = 1.0
    """First retry delay (doubled each retry, with jitter) when the server sends no ``Retry-After``."""
    choice_rules: str = "vlmevalkit"
    """MCQ answers: the era of VLMEvalKit's ``can_infer`` (``vlmevalkit`` today's, ``vlmevalkit-2025``,
    ``vlmevalkit-2024``; see :data:`mmbatch.answers.letters.CHOICE_RULES`)."""
    yes_no_rule: str = "official"
    """Yes/no answers: ``official`` (the benchmark's own rule: MME's prefix rule, POPE's) or ``vlmevalkit`` (word
    rule, then the judge)."""
    kind_options: tuple[tuple[str, str], ...] = ()
    """``--kind-option NAME=VALUE`` pairs: settings an answer kind declares (its ``options``); a name no kind of
    the file reads, or a value it does not allow, is refused."""
    likelihood_reduction: str = "sum"
    """How likelihood rows rank options: ``sum``, ``mean`` (per token) or ``mean-char`` (per character)."""
    unmatched: str = "none"
    """``none``: rows the judge cannot match stay empty; ``random``: VLMEvalKit's random letter, seeded."""
    seed: int = 0
    """Seed of ``--unmatched random`` (each row's letter depends only on the seed and its index)."""
    skip_failed_groups: bool = True
    """CircularEval: rows of a group already known wrong are not sent to the judge (as VLMEvalKit does)."""
    clip_model: str = "openai/clip-vit-large-patch14"
    """generate-image rows: the CLIP-family model (``AutoModel``/``AutoProcessor``) that compares pictures."""
    clip_batch_size: int = 16
    """generate-image rows: pictures per CLIP forward pass."""
    clip_device: str = "auto"
    """generate-image rows: where CLIP runs (``auto`` = CUDA when present, ``cpu``, ``cuda``, ``cuda:N``)."""
    media_root: Path | None = None
    """Folder the option pictures are read in; None confines them to the predictions file's folder (as ``infer``
    does: the root ``prepare`` recorded is used when it lies inside)."""
    stored_verdicts: bool = False
    """Rows the rules leave open take the verdict recorded in the VLMEvalKit judged file the predictions were
    imported with (:mod:`mmbatch.extract.stored_verdicts`) instead of asking a judge; every row's score is checked
    against the score recorded there."""
    force: bool = False
    """Discard earlier progress made with other settings instead of refusing."""
    reasoning_tags: tuple[tuple[str, str], ...] = THINK_TAGS
    """``(opening, closing)`` pairs of the reasoning traces removed from a prediction before it is matched
    (:mod:`mmbatch.extract.reasoning`); empty matches predictions as they are."""
