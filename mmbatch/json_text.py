"""JSON text from files mmbatch did not write, parsed so that it cannot become a wrong number or a crash later.

Python's ``json`` turns ``1e400`` into ``inf`` and ``NaN``/``Infinity`` into floats that no benchmark id, dimension or
segment can hold (an id of ``inf``, a segment end that aborts frame sampling), and it raises ``RecursionError`` (not
a ``ValueError``) on an array nested a few thousand levels deep. :func:`parse_json` reports all three as
``ValueError``, the error every reader already turns into exit 2 naming the file.
"""

from __future__ import annotations

import json
import math
from typing import Any


def parse_json(text: str | bytes, *, finite_numbers: bool = True) -> Any:
    """``json.loads(text)``, with every way the text can fail raised as ``ValueError``.

    Args:
        text: the JSON text.
        finite_numbers: refuse a number that is not finite as a float (``1e400``, ``NaN``, ``-Infinity``). Off only
            for metadata mmbatch wrote itself, where a NaN setting is a value.

    Raises:
        ValueError: not JSON (``json.JSONDecodeError``), a non-finite number, an integer of more digits than Python
            converts, or nesting deeper than the parser's recursion allows.
    """
    try:
        if finite_numbers:
            return json.loads(text, parse_float=_finite_float, parse_constant=_no_constant)
        return json.loads(text)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply to be read") from None


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"the number {literal[:40]} is out of range (not a finite float)")
    return value


def _no_constant(literal: str) -> float:
    raise ValueError(f"{literal} is not a number a benchmark file can hold")
