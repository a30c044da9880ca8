"""The ``echo`` backend: deterministic answers without a model, for tests, dry runs and pipeline checks.

``--model`` chooses what it answers (``MODE`` or ``MODE:ARGUMENT``):

- ``answer``: the row's ground truth (the answer letter, or ``Yes``/``No``), empty text when the row has none;
  in likelihood mode the right option gets the best score. An answer that is a list of accepted answers (TextVQA's
  ten human answers, DocVQA's and OCRBench's accepted strings, written as a Python list) gives its most frequent
  element, the first of equals: the list itself is no answer a model would give.
- ``fixed:TEXT``: always ``TEXT``; in likelihood mode every option gets the same score per token, so the first
  option wins (ties go to the first choice).
- ``letter:X``: always the letter ``X``; in likelihood mode option ``X`` (by position, A = first) wins.
- ``prompt``: the last line of the prompt, as a stand-in for a model that repeats its input.
- ``media``: a description of what the model would see (``2 images 32x16 8x8``, ``video 8 frames 64x48``; images
  placed in the prompt add their order, ``2 images 4x4 8x8, in order: text image text image text``), to check image
  references, placement and frame sampling end to end.

In ``generate-image`` mode (SEED-Bench-2 level 3) ``answer`` returns the right option's image file as it is and
``letter:X`` option ``X``'s, so that CLIP extraction and scoring can be checked end to end; the other modes fail
the row.

``--gen-arg stop=...`` cuts the answer before the first stop string, as a model's server does; the other
``--gen-arg`` settings and ``--system-prompt`` are recorded but change nothing (there is no model to sample from).

Scores in likelihood mode are ``-1`` per token (a token is a whitespace-separated word), minus 5 more for every
option that is not the chosen one, so ``choice_logprobs`` and ``choice_ntokens`` look like a real model's.

Test aid: ``MMBATCH_ECHO_DELAY_S`` (seconds per row, default 0) slows the backend down so tests can kill a run in
the middle; it does not change any result.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image

from mmbatch.backends.base import BackendOptions, Request, Result
from mmbatch.errors import BadInputError
from mmbatch.schema.columns import OPTION_LETTERS

MODES = ("answer", "fixed", "letter", "prompt", "media")
DELAY_VARIABLE = "MMBATCH_ECHO_DELAY_S"
WRONG_OPTION_PENALTY = 5.0


@dataclass(frozen=True)
class EchoMode:
    """A parsed ``--model`` for the echo backend."""

    name: str
    """One of :data:`MODES`."""
    argument: str | None = None
    """The text after ``:`` (``fixed`` text, ``letter`` letter)."""


def parse_mode(model: str) -> EchoMode:
    """Parse ``MODE[:ARGUMENT]``.

    Raises:
        BadInputError: an unknown mode, or a missing or bad argument.
    """
    name, _, argument = model.partition(":")
    if name not in MODES:
        raise BadInputError(f"--model {model!r}: the echo backend answers with one of {', '.join(MODES)} "
                            "(e.g. answer, fixed:TEXT, letter:B)")
    if name in ("fixed", "letter") and not argument:
        raise BadInputError(f"--model {model!r}: echo mode {name!r} needs an argument ({name}:...)")
    if name == "letter" and not (len(argument) == 1 and argument.isupper()):
        raise BadInputError(f"--model {model!r}: letter:X needs one uppercase letter")
    return EchoMode(name, argument or None)


@dataclass(frozen=True)
class EchoOptions(BackendOptions):
    """The echo backend reads only ``model`` (its mode); its chunks are the smallest ``infer`` makes."""


class EchoBackend:
    """Answers from the request itself; see the module docstring for the modes."""

    name = "echo"

    def __init__(self, options: EchoOptions) -> None:
        self.options = options
        self.mode = parse_mode(options.model)
        self.delay_s = float(os.environ.get(DELAY_VARIABLE, "0") or 0)

    def settings(self) -> dict[str, Any]:
        """The mode (and stop strings, which cut its answers) is all that changes results."""
        return {"backend": self.name, "model": self.options.model,
                **({"stop": list(self.options.generation.stop)} if self.options.generation.stop else {})}

    def generate(self, requests: Sequence[Request], *, max_new_tokens: int) -> Iterator[list[Result]]:
        """One result per request, yielded one at a time (like an API backend)."""
        for request in requests:
            start = time.perf_counter()
            self._wait()
            words = self._answer_text(request).split(" ")
            text, _ = self.options.generation.cut_at_stop(" ".join(words[:max_new_tokens]))
            yield [Result(request.index, prediction=text, output_tokens=len(text.split()),
                          latency_ms=_elapsed_ms(start))]

    def likelihood_refusal(self) -> str | None:
        """None: every echo mode has a likelihood rule."""
        return None

    def loglikelihood(self, requests: Sequence[Request]) -> Iterator[list[Result]]:
        """Scores that favour the chosen option (see the module docstring)."""
        for request in requests:
            start = time.perf_counter()
            self._wait()
            chosen = self._chosen_position(request)
            ntokens = [max(len(option.split()), 1) for option in request.options]
            logprobs = [-float(n) - (0.0 if i == chosen else WRONG_OPTION_PENALTY) for i, n in enumerate(ntokens)]
            yield [Result(request.index, choice_logprobs=logprobs, choice_ntokens=ntokens, output_tokens=0,
                          latency_ms=_elapsed_ms(start))]

    def generate_images(self, requests: Sequence[Request]) -> Iterator[list[Result]]:
        """The chosen option's own image (``answer``: the right one, ``letter:X``: option X), one row at a time."""
        for request in requests:
            start = time.perf_counter()
            self._wait()
            yield [self._option_image(request, start)]

    def close(self) -> None:
        """Nothing to release."""

    def _option_image(self, request: Request, start: float) -> Result:
        if self.mode.name == "answer":
            letter = request.answer
        elif self.mode.name == "letter":
            letter = self.mode.argument
        else:
            return Result(request.index, error=f"echo mode {self.mode.name!r} makes no image; use answer or letter:X")
        position = OPTION_LETTERS.index(letter) if letter in OPTION_LETTERS else len(request.option_images)
        if position >= len(request.option_images):
            return Result(request.index, error=f"no option image for letter {letter!r}")
        with Image.open(request.option_images[position]) as picture:
            image = picture.convert("RGB")
        return Result(request.index, image=image, output_tokens=0, latency_ms=_elapsed_ms(start))

    def _wait(self) -> None:
        if self.delay_s > 0:
            time.sleep(self.delay_s)

    def _answer_text(self, request: Request) -> str:
        mode = self.mode
        if mode.name == "answer":
            return ground_truth_answer(request.answer)
        if mode.name in ("fixed", "letter"):
            return mode.argument or ""
        if mode.name == "prompt":
            lines = [line for line in request.prompt.splitlines() if line.strip()]
            return lines[-1].strip() if lines else ""
        return describe_media(request)

    def _chosen_position(self, request: Request) -> int | None:
        if self.mode.name == "answer":
            return request.answer_position
        if self.mode.name == "letter" and self.mode.argument:
            return ord(self.mode.argument) - ord("A")
        return None


def ground_truth_answer(answer: str | None) -> str:
    """What ``answer`` mode says: the answer cell, or the most frequent of a list of accepted answers."""
    from mmbatch.answers.reference_answers import ReferenceProblem, python_list

    text = (answer or "").strip()
    try:
        elements = python_list(text)
    except ReferenceProblem:  # only eval() could read it as a list: the cell as it is
        return text
    accepted = [element.strip() for element in elements or () if isinstance(element, str) and element.strip()]
    # most_common keeps first-seen order among equal counts, so the first of equals wins.
    return Counter(accepted).most_common(1)[0][0] if accepted else text


def describe_media(request: Request) -> str:
    """What a request shows the model, e.g. ``video 8 frames 64x48`` or ``2 images 32x16 8x8``."""
    if not request.images:
        return "no image"
    sizes = " ".join(f"{image.width}x{image.height}" for image in request.images)
    if request.is_video:
        return f"video {len(request.images)} frames {sizes}"
    noun = "image" if len(request.images) == 1 else "images"
    if request.segments is not None:
        layout = " ".join(("image " if position else "") + ("text" if text else "")
                          for position, text in enumerate(request.segments)).split()
        return f"{len(request.images)} {noun} {sizes}, in order: {' '.join(layout)}"
    return f"{len(request.images)} {noun} {sizes}"


def _elapsed_ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def create_backend(options: EchoOptions) -> EchoBackend:
    """The ``echo`` backend for ``options.model`` (a mode, see the module docstring)."""
    return EchoBackend(options)
