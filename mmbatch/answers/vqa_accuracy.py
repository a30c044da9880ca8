"""The VQA accuracy kind (TextVQA): a prediction against the ten human answers.

The VQA metric: for each human answer ``i``, ``min(1, #{j != i : answer_j == prediction} / 3)``; the row's score is
the mean over ``i``. With ten answers, a prediction that four or more annotators gave scores 1, three 0.9, two 0.6,
one 0.3, none 0. Predictions and answers are compared after normalisation (:mod:`mmbatch.answers.vqa_text`).

Eras (``--kind-option rules=``):

- ``vlmevalkit`` (default): VLMEvalKit today (``process_answer`` with the period pattern fixed in 928a95b0,
  2025-05-13: ``"2010."`` keeps its period and no longer matches ``2010``);
- ``vlmevalkit-2024``: VLMEvalKit before 928a95b0, the numbers it published until May 2025 (every golden file);
- ``official``: the TextVQA authors' evaluator (MMF's ``TextVQAAccuracyEvaluator``, which LLaVA's
  ``eval_textvqa`` runs): EvalAI's answer processor, exactly ten answers per question.
"""

from __future__ import annotations

from functools import lru_cache

from mmbatch.answers.open_answers import OpenAnswerKind, Verdict
from mmbatch.answers.reference_answers import ReferenceProblem, reference_texts
from mmbatch.answers.vqa_text import evalai_normalise, vqa_normalise
from mmbatch.numpy_order import numpy_mean

ERAS = ("vlmevalkit", "vlmevalkit-2024", "official")
"""The values of ``--kind-option rules=``, the default first."""
OFFICIAL_ANSWERS = 10
"""The TextVQA authors' evaluator asserts ten human answers per question."""


@lru_cache(maxsize=1 << 16)
def normalised(text: str, era: str) -> str:
    """``text`` normalised as the era compares it."""
    return evalai_normalise(text) if era == "official" else vqa_normalise(text, era)


@lru_cache(maxsize=1 << 16)
def normalised_references(cell: str, era: str) -> tuple[str, ...]:
    """The human answers of ``cell``, normalised."""
    return tuple(normalised(answer, era) for answer in reference_texts(cell, need_list=True))


@lru_cache(maxsize=4096)
def vlmevalkit_mean(matches: tuple[bool, ...]) -> float:
    """VLMEvalKit's score for the answers that equal the prediction (``matches``): the per-answer accuracies
    averaged as ``numpy.mean`` averages them (:func:`~mmbatch.numpy_order.numpy_mean`), so that the float is the one
    VLMEvalKit printed, bit for bit."""
    same = matches.count(True)
    return numpy_mean([float(min(1, (same - 1 if match else same) / 3)) for match in matches])


@lru_cache(maxsize=4096)
def official_mean(matches: tuple[bool, ...]) -> float:
    """The TextVQA evaluator's score: the same accuracies, summed in Python order and divided by their count; 0 when
    no answer equals the prediction."""
    same = matches.count(True)
    if not same:
        return 0.0
    accuracies = [min(1, (same - 1 if match else same) / 3) for match in matches]
    return sum(accuracies) / len(accuracies)


class VqaAccuracyRule:
    """The VQA metric over the human answers."""

    def check(self, cell: str, rules: str) -> object:
        """The human answers: a list of strings (ten of them under ``official``)."""
        answers = reference_texts(cell, need_list=True)
        if rules == "official" and len(answers) != OFFICIAL_ANSWERS:
            raise ReferenceProblem(f"the TextVQA evaluator needs {OFFICIAL_ANSWERS} human answers, this row has "
                                   f"{len(answers)}")
        return answers

    def verdict(self, prediction: str, cell: str, category: str | None, rules: str) -> Verdict:
        """How many human answers equal the normalised prediction, and the resulting score."""
        read_as = normalised(prediction, rules)
        answers = normalised_references(cell, rules)
        matches = tuple(map(read_as.__eq__, answers))
        score = official_mean(matches) if rules == "official" else vlmevalkit_mean(matches)
        return Verdict(score, f"{matches.count(True)} of {len(matches)} human answers match {read_as!r}")


VQA_ACCURACY = OpenAnswerKind(name="vqa-accuracy", rule=VqaAccuracyRule(), binary=False, eras=ERAS)
"""TextVQA's kind."""
