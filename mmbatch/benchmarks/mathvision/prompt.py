"""The answer-extraction prompt VLMEvalKit sends its judge for MathVision (``build_mathv_gpt4_prompt``), byte for
byte: MathVista's frame (:func:`mmbatch.benchmarks.mathvista.prompt.extraction_prompt`, its ``Model respone:`` and
the missing line break before ``Extracted answer:`` included) with MathVision's five examples, whose first four share
one hint."""

from __future__ import annotations

from mmbatch.benchmarks.mathvista.prompt import (
    BLUE_SHAPE,
    CANDY,
    FEMALES,
    INSTRUCTION,
    MISSING_NUMBER,
    PEAK,
    Example,
    extraction_prompt,
)

FINAL_ANSWER_HINT = "Please answer the question and provide the final answer at the end."
"""The hint of MathVision's four free-form examples."""

MATHVISION_EXAMPLES: tuple[Example, ...] = (
    *(Example(FINAL_ANSWER_HINT, *example) for example in (MISSING_NUMBER, FEMALES, CANDY, PEAK)),
    BLUE_SHAPE,
)
"""MathVision's five examples: MathVista's questions, the free-form ones under one hint."""

__all__ = ["INSTRUCTION", "MATHVISION_EXAMPLES", "mathvision_prompt"]


def mathvision_prompt(question: str, prediction: str) -> str:
    """VLMEvalKit's MathVision judge prompt for one row (``question`` as the TSV holds it)."""
    return extraction_prompt(MATHVISION_EXAMPLES, question, prediction)
