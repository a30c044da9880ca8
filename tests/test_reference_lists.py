"""Reference lists read without compiling them (mmbatch/answers/reference_answers.py): a list of plain quoted strings
is split by a pattern, anything else goes through ``ast.literal_eval``; the two must agree wherever the pattern takes
a cell. Checked on every answer cell of the real VQA-style files and on generated cells built to break the pattern."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from mmbatch.answers import reference_answers
from mmbatch.answers.reference_answers import python_list
from mmbatch.tableio import read_raw

VQA_FILES = ("TextVQA_VAL", "ChartQA_TEST", "OCRVQA_TESTCORE", "OCRBench", "DocVQA_VAL", "InfoVQA_VAL")


def literal_list(cell: str) -> tuple[object, ...] | None:
    """What ``ast.literal_eval`` makes of the cell: its elements when it is a list, else None."""
    try:
        value = ast.literal_eval(cell)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return tuple(value) if isinstance(value, list) else None


def real_answer_cells(real_results: Path) -> list[str]:
    paths = sorted(path for path in real_results.glob("*/*.xlsx") if any(name in path.name for name in VQA_FILES)
                   and not path.stem.endswith(("_gpt4", "_acc", "_score")))
    cells: set[str] = set()
    for path in paths:
        frame = read_raw(path).frame
        if "answer" in frame.columns:
            cells.update(cell for cell in frame["answer"].cast(str).drop_nulls().to_list())
    return sorted(cells)


def test_every_real_answer_cell_reads_as_literal_eval_reads_it(shared_data: Path) -> None:
    cells = real_answer_cells(shared_data / "real_results")
    plain = [cell for cell in cells if reference_answers._PLAIN_LIST.fullmatch(cell)]
    assert len(cells) > 5_000 and len(plain) > len(cells) // 2  # the pattern takes most of them: it is exercised
    for cell in cells:
        assert python_list(cell) == literal_list(cell), cell


ALPHABET = ["a", "b", " ", "'", '"', "\\", "\n", "\r", "\t", "\x00", "\x0c", ",", "[", "]", "#", "é", "\u3000",
            "\u2028", "n", "x", "0", "\\'", '\\"', "\\n", "\\x41", "\\u00e9", "''", '""']
INSIDE = ["a", " ", "'", '"', "\t", "\x0c", ",", "[", "]", "#", "é", "\u3000", "\u2028", "\x85", "\x1a", "0"]
"""Characters a plain quoted string may hold, some of them odd for Python's tokenizer outside a string."""
SEPARATORS = [", ", ",", " , ", ",  ", ", \n", " ", ""]


def generated_cell(rng: random.Random) -> str:
    """A list-like cell: random strings from :data:`ALPHABET` (or, half the time, :data:`INSIDE`), quoted either way
    (sometimes badly), joined by a separator that is usually the canonical one, sometimes with extra brackets, spaces
    or a trailing comma."""
    items = []
    characters = ALPHABET if rng.random() < 0.5 else INSIDE
    for _ in range(rng.randrange(0, 5)):
        quote = rng.choice(["'", '"'] * 4 + ["", "'''"])
        text = "".join(rng.choice(characters) for _ in range(rng.randrange(0, 6)))
        items.append(f"{rng.choice([''] * 12 + ['r', 'b', 'u'])}{quote}{text}{quote}")
    body = (", " if rng.random() < 0.7 else rng.choice(SEPARATORS)).join(items)
    cell = f"[{body}{',' if rng.random() < 0.1 else ''}]"
    if rng.random() < 0.1:
        cell = rng.choice([" ", "\t", "\n", "x", "[", "("]) + cell
    if rng.random() < 0.1:
        cell = cell + rng.choice([" ", "\t", "\n", "]", " * 2", "[0]"])
    return cell


@pytest.mark.parametrize("seed", range(4))
def test_generated_cells_read_as_literal_eval_reads_them(seed: int) -> None:
    rng = random.Random(seed)
    taken = 0
    for _ in range(25_000):
        cell = generated_cell(rng)
        if reference_answers._PLAIN_LIST.fullmatch(cell):
            taken += 1
            assert python_list(cell) == literal_list(cell), repr(cell)
    assert taken > 2_000  # enough of them reach the pattern's side to prove it
