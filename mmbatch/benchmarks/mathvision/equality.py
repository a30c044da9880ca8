"""VLMEvalKit's MathVision ``is_equal(answer, truth)`` (``vlmeval/dataset/utils/mathv.py``, e8e78f05), step by step.

1. Both sides lower-cased and stripped; equal texts are equal.
2. Python's ``eval`` of the truth, then of the answer (here :func:`~.safe_eval.safe_eval`, whose names resolve as
   in ``is_equal``: ``a`` is the truth's value once it is bound), equal when ``abs(a - b) < 1e-6``.
3. ``latex2sympy`` of both (``latex2sympy2_extended``, which VLMEvalKit imports first since its pull request 1499),
   then ``eval`` of each one's printed form (the sympy values bound to ``a`` and ``b``), then their sympy
   difference.

Any exception in a step means "not equal by that step". VLMEvalKit runs the whole under a 30 s timeout, and a timeout
means "not equal" whatever a later step would have said: a power too large to compute is that timeout
(:class:`~.safe_eval.WouldTimeOut`), and this module is run in a worker process the caller kills at the deadline
(:mod:`.equality_worker`). A text the safe evaluator cannot follow gives :data:`REFUSED`, never a guess.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mmbatch.benchmarks.mathvision.safe_eval import Opaque, Refused, WouldTimeOut, safe_eval

EQUAL, DIFFERENT, TIMEOUT, REFUSED = "equal", "different", "timeout", "refused"
"""Verdicts: equal; not equal; not equal because VLMEvalKit's timeout fires; undecidable here (the row fails)."""
TOLERANCE = 1e-6
"""``abs(a - b) < 1e-6``."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of one comparison."""

    outcome: str
    """One of :data:`EQUAL`, :data:`DIFFERENT`, :data:`TIMEOUT`, :data:`REFUSED`."""
    reason: str | None = None
    """Why, for :data:`TIMEOUT` and :data:`REFUSED`."""

    @property
    def equal(self) -> bool:
        """Whether VLMEvalKit counts the pair equal (a refused pair must not be scored at all)."""
        return self.outcome == EQUAL


def _evaluate(text: str, local_names: Mapping[str, Any]) -> Any:
    with warnings.catch_warnings():  # "perhaps you missed a comma?": Python only warns (an error under -W error)
        warnings.simplefilter("ignore")
        return safe_eval(text, local_names)


def _close(a: Any, b: Any) -> bool:
    """``abs(a - b) < 1e-6`` as an ``if`` reads it (raises as Python does: a string, a sympy relation...)."""
    return bool(abs(a - b) < TOLERANCE)


def _opaque_free(*values: Any) -> None:
    """A builtin or module name has no ``-`` with anything (Python's ``TypeError``)."""
    if any(isinstance(value, Opaque) for value in values):
        raise TypeError("unsupported operand type(s) for -")


def is_equal(answer: str, truth: str, latex2sympy: Callable[[str], Any]) -> Verdict:
    """VLMEvalKit's ``is_equal(answer, truth)``, with ``latex2sympy`` the converter it imports."""
    asw, gt_asw = answer.lower().strip(), truth.lower().strip()
    if gt_asw == asw:
        return Verdict(EQUAL)
    names: dict[str, Any] = {"asw": asw, "gt_asw": gt_asw}
    try:
        names["a"] = _evaluate(gt_asw, names)
        names["b"] = _evaluate(asw, names)
        _opaque_free(names["a"], names["b"])
        if _close(names["a"], names["b"]):
            return Verdict(EQUAL)
    except Refused as exc:
        return Verdict(REFUSED, f"Python's eval of the answer or the truth: {exc}")
    except WouldTimeOut as exc:
        return Verdict(TIMEOUT, f"{exc}: VLMEvalKit's 30 s timeout")
    except Exception:
        pass
    try:
        a = latex2sympy(gt_asw)
        b = latex2sympy(asw)
        names.update(a=a, b=b)
        first, second = _evaluate(str(a), names), _evaluate(str(b), names)
        _opaque_free(first, second)
        if _close(first, second):
            return Verdict(EQUAL)
        if _close(a, b):
            return Verdict(EQUAL)
    except Refused as exc:
        return Verdict(REFUSED, f"Python's eval of latex2sympy's result: {exc}")
    except WouldTimeOut as exc:
        return Verdict(TIMEOUT, f"{exc}: VLMEvalKit's 30 s timeout")
    except Exception:
        pass
    return Verdict(DIFFERENT)
