"""Prompt templates, byte-exact (docs/rules.md §2).

A template turns one question (its text, hint and present options) into the text the model sees; images always
come before the text in the model message. Every prepared row records the template's name and the SHA-256 of the
rendered prompt.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mmbatch.row_facts import is_missing

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LLAVA_INSTRUCTION_EN = "Answer with the option's letter from the given choices directly."
_LLAVA_INSTRUCTION_ZH = "请直接回答选项字母。"


@dataclass(frozen=True)
class PromptInput:
    """What a template needs from a row."""

    question: str
    """The question text."""
    hint: str | None = None
    """Context shown before the question, or None."""
    options: Mapping[str, str] | None = None
    """Present options, letter -> text, in letter order; missing options are simply absent (no relabelling)."""


def contains_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK ideograph (U+4E00-U+9FFF)."""
    return bool(_CJK.search(text))


def render_vlmevalkit(item: PromptInput) -> str:
    """VLMEvalKit ``ImageMCQDataset.build_prompt``: the default MCQ prompt."""
    text = ""
    if not is_missing(item.hint):
        text += f"Hint: {item.hint}\n"
    text += f"Question: {item.question}\n"
    if item.options:
        text += "Options:\n"
        text += "".join(f"{letter}. {option}\n" for letter, option in item.options.items())
        text += "Please select the correct answer from the options above. \n"
    return text


def render_llava(item: PromptInput) -> str:
    """LLaVA-1.5's MMBench prompt: hint, question, options, and a one-line instruction (Chinese for CJK questions)."""
    lines = [] if is_missing(item.hint) else [str(item.hint)]
    lines.append(item.question)
    lines += [f"{letter}. {option}" for letter, option in (item.options or {}).items()]
    chinese = contains_cjk(item.question)
    lines.append(_LLAVA_INSTRUCTION_ZH if chinese else _LLAVA_INSTRUCTION_EN)
    return "\n".join(lines)


def render_seed_likelihood(item: PromptInput) -> str:
    """SEED-Bench answer ranking: the options are not listed; each is scored as the continuation."""
    return f"Question: {item.question}\nAnswer:"


VQA_SHORT_ANSWER = "\nAnswer the question using a single word or phrase."
"""What VLMEvalKit's ``ImageVQADataset.build_prompt`` appends to the question (TextVQA, DocVQA, ChartQA, ...)."""


def render_vqa_short_answer(item: PromptInput) -> str:
    """VLMEvalKit ``ImageVQADataset.build_prompt``: the question, then a line asking for a word or a phrase."""
    return item.question + VQA_SHORT_ANSWER


def render_question(item: PromptInput) -> str:
    """MME: the question exactly as the benchmark writes it (it already asks for yes or no)."""
    return item.question


TEMPLATES: dict[str, Callable[[PromptInput], str]] = {
    "vlmevalkit": render_vlmevalkit,
    "llava": render_llava,
    "seed-likelihood": render_seed_likelihood,
    "mme": render_question,
    "vlmevalkit-vqa": render_vqa_short_answer,
}
"""Template name -> renderer. The names are recorded in the ``prompt_template`` column."""


def render(template: str, item: PromptInput) -> str:
    """Render ``item`` with the named template."""
    try:
        return TEMPLATES[template](item)
    except KeyError:
        from mmbatch.errors import BadInputError

        raise BadInputError(
            f"unknown prompt template {template!r}; choose one of {', '.join(TEMPLATES)}"
        ) from None


def prompt_hash(prompt: str) -> str:
    """The first 16 hex digits of the prompt's SHA-256, recorded per row."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16]
