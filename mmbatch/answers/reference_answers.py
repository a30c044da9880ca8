"""Reference answers of open-answer benchmarks, read the way VLMEvalKit reads its own tables.

VLMEvalKit loads a prediction table with pandas and scores ``str(cell)``, so two things happen before any rule runs:

- pandas reads a cell whose whole text is one of its missing-value spellings (``None``, ``N/A``, ``nan``, ``NULL``,
  an empty cell...) as NaN, which ``str`` turns into ``"nan"``. A model that answers ``None`` has, for VLMEvalKit,
  given no answer: TextVQA's golden files come out to the last digit only when such predictions score nothing.
- an ``answer`` cell holding a Python list literal (``['dakota', 'dakota digital', ...]``) is a list of references
  (VLMEvalKit ``eval``\\ s it); any other text is one reference.

mmbatch never evaluates a cell as code: a list is read with :func:`ast.literal_eval`, and a cell that only ``eval``
could turn into a list (``['a'] * 10``, ``list('ab')``) is refused rather than guessed at.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable
from functools import lru_cache

import polars as pl

from mmbatch.answers.frames import has_text
from mmbatch.answers.run_memory import function_identity, once_per_input

PANDAS_MISSING = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA",
    "NULL", "NaN", "None", "n/a", "nan", "null",
})
"""The cell texts pandas (2.x, the version VLMEvalKit runs on) reads as a missing value by default."""

PANDAS_MISSING_TEXT = "nan"
"""What ``str()`` makes of a missing value: the text VLMEvalKit's rules see for such a cell."""

_BUILDS_A_LIST = (ast.List, ast.ListComp, ast.Call, ast.Starred)
"""Expression nodes through which ``eval`` could make a list out of a cell that is not a list literal."""
_MAY_SKIP_A_NAME = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr, ast.ListComp, ast.SetComp, ast.DictComp,
                    ast.GeneratorExp)
"""Nodes under which a name may never be looked up (short-circuits) or is bound by the expression itself."""
_BUILTIN_NAMES = frozenset(dir(builtins))

_PLAIN_STRING = re.compile(r"'([^'\\\n\r\x00]*)'|\"([^\"\\\n\r\x00]*)\"")
"""A plain quoted string as Python's ``repr`` writes one: no escape, line break or NUL inside the quotes, so that its
text is what lies between them, as ``ast.literal_eval`` reads it."""
_PLAIN_LIST = re.compile(rf"\[(?:{_PLAIN_STRING.pattern})(?:, (?:{_PLAIN_STRING.pattern}))*\]")
"""A list literal of plain quoted strings (``['a', "b's"]``), one ``", "`` between them: its strings are taken by
:data:`_PLAIN_STRING` without compiling the cell (~40 us a distinct cell)."""


class ReferenceProblem(ValueError):
    """An ``answer`` cell a kind cannot score; the message says why (the caller names the file, row and column)."""


def read_by_pandas(cell: str | None) -> str:
    """The text VLMEvalKit scores for a cell: ``"nan"`` for a missing one (see :data:`PANDAS_MISSING`), else the
    cell as it is."""
    if cell is None or cell in PANDAS_MISSING:
        return PANDAS_MISSING_TEXT
    return cell


def is_missing_prediction(text: str | None) -> bool:
    """Whether VLMEvalKit reads this prediction as no answer at all (empty, or a pandas missing-value spelling)."""
    return text is None or text in PANDAS_MISSING


@lru_cache(maxsize=1 << 16)
def python_list(cell: str) -> tuple[object, ...] | None:
    """The elements of ``cell`` when VLMEvalKit's ``istype(cell, list)`` holds for it, else None.

    Raises:
        ReferenceProblem: only ``eval`` could tell (the cell is an expression that may build a list).
    """
    if _PLAIN_LIST.fullmatch(cell):
        return tuple(found[1] if found[1] is not None else found[2] for found in _PLAIN_STRING.finditer(cell))
    try:
        value = ast.literal_eval(cell)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        if _may_build_list(cell):
            raise ReferenceProblem(f"{_shown(cell)} is a Python expression VLMEvalKit would run with eval() to get "
                                   "its list of references; mmbatch runs no code: write the list out") from None
        return None
    return tuple(value) if isinstance(value, list) else None


def _may_build_list(cell: str) -> bool:
    """Whether ``eval(cell)`` could return a list although ``cell`` is no list literal.

    Only an expression with a list-building node can; and one that names something Python does not define fails
    with a NameError first (``Gardening (Basics)`` is a call of an unknown name: one reference, as for VLMEvalKit),
    unless a short-circuit or a comprehension could skip or bind that name.
    """
    try:
        nodes = list(ast.walk(ast.parse(cell.strip(), mode="eval")))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False  # eval fails too: VLMEvalKit takes the cell as one reference
    if not any(isinstance(node, _BUILDS_A_LIST) for node in nodes):
        return False
    unknown_name = any(isinstance(node, ast.Name) and node.id not in _BUILTIN_NAMES for node in nodes)
    return not unknown_name or any(isinstance(node, _MAY_SKIP_A_NAME) for node in nodes)


def reference_texts(cell: str, *, need_list: bool) -> tuple[str, ...]:
    """The references in an ``answer`` cell, each a string, as VLMEvalKit's VQA scorers read them.

    Args:
        cell: the ``answer`` text (already read as pandas reads it).
        need_list: the benchmark's references are always a list (TextVQA's ten human answers, OCRBench's
            accepted strings); a single text is refused, as VLMEvalKit would score it wrong (TextVQA) or fail.

    Raises:
        ReferenceProblem: not a list where one is needed, an empty list, or an element that is not text (VLMEvalKit
            calls string methods on each and fails).
    """
    elements = python_list(cell)
    if elements is None:
        if need_list:
            raise ReferenceProblem(f"{_shown(cell)} is not a list of reference answers (expected a Python list "
                                   "literal such as ['a', 'b'])")
        return (cell,)
    _check_not_empty(cell, elements)
    for element in elements:
        if not isinstance(element, str):
            raise ReferenceProblem(f"{_shown(cell)} holds {element!r}, which is not text; every reference must be "
                                   "a quoted string")
    return tuple(str(element) for element in elements)


def reference_values(cell: str) -> tuple[str, ...]:
    """The references as ChartQA's relaxed accuracy reads them: a list's elements through ``str`` (``[2013, 2016]``
    gives ``2013`` and ``2016``; ``1.30`` in a list gives ``1.3``), else the cell itself.

    Raises:
        ReferenceProblem: an empty list.
    """
    elements = python_list(cell)
    if elements is None:
        return (cell,)
    _check_not_empty(cell, elements)
    return tuple(str(element) for element in elements)


def _check_not_empty(cell: str, elements: tuple[object, ...]) -> None:
    if not elements:
        raise ReferenceProblem(f"{_shown(cell)} lists no reference answer")


def _shown(cell: str) -> str:
    return repr(cell if len(cell) <= 80 else cell[:77] + "...")


def first_problem(rows: pl.DataFrame, check: Callable[[str], object]) -> tuple[object, str] | None:
    """The first (``index``, reason) of ``rows`` whose ``answer`` cell ``check`` refuses; None when it takes all.

    Rows without an answer (null or blank: test splits) are skipped; each distinct cell is checked once, in file order
    (once per run when the stage reads its file in batches: :mod:`mmbatch.answers.run_memory`).
    """
    answer = pl.col("answer").cast(pl.String)
    firsts = rows.select("index", answer).filter(has_text("answer"))
    distinct = firsts.unique(subset="answer", keep="first", maintain_order=True)

    def problems(unseen: pl.DataFrame) -> pl.DataFrame:
        found: list[str | None] = []
        for cell in unseen["answer"]:
            try:
                check(cell)
            except ReferenceProblem as problem:
                found.append(str(problem))
            else:
                found.append(None)
        return pl.DataFrame({"problem": found}, schema={"problem": pl.String})

    problem = once_per_input(distinct.select("answer"), problems, ("first_problem", function_identity(check)))
    refused = problem["problem"].is_not_null()
    if not refused.any():
        return None
    first = int(refused.arg_true()[0])
    return distinct["index"][first], str(problem["problem"][first])
