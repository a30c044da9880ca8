"""Write ``examples/mme/``: a tiny MME release folder whose drawn images make every answer true.

Five subtasks, two questions per image (one Yes, one No), in both layouts of the official release:
``existence/``, ``count/`` and ``numerical_calculation/`` hold ``<stem>.png`` beside ``<stem>.txt``; ``color/`` and
``OCR/`` hold ``images/<stem>.png`` and ``questions_answers_YN/<stem>.txt``. One colour question keeps the real
data's double space before "Please answer yes or no.". The output is byte-for-byte the same on every run.

Usage: ``python examples/generate/mme.py [OUT_DIR]`` (default ``examples/``; writes ``OUT_DIR/mme/``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drawing import Shape, count_picture, picture, word_picture

SIZE = 128
ASK = " Please answer yes or no."
NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def existence() -> list[tuple[Image.Image, list[tuple[str, str]]]]:
    """Shapes present and absent."""
    items = []
    for present, absent, colour in (("circle", "square", "red"), ("square", "triangle", "blue"),
                                    ("triangle", "circle", "green")):
        image = picture([Shape(present, colour, (34, 34, 94, 94))], SIZE)
        items.append((image, [(f"Is there a {present} in this image?{ASK}", "Yes"),
                              (f"Is there a {absent} in this image?{ASK}", "No")]))
    return items


def count() -> list[tuple[Image.Image, list[tuple[str, str]]]]:
    """N circles; the No question asks for N + 1."""
    items = []
    for n in (1, 2, 3):
        image = count_picture(n, "circle", "blue", SIZE)
        noun = "circle" if n == 1 else "circles"
        verb = "Is there" if n == 1 else "Are there"
        items.append((image, [(f"{verb} {NUMBERS[n]} {noun} in the image?{ASK}", "Yes"),
                              (f"Are there {NUMBERS[n + 1]} circles in the image?{ASK}", "No")]))
    return items


def color() -> list[tuple[Image.Image, list[tuple[str, str]]]]:
    """One big square of a colour; the first item keeps the real data's double space before the request."""
    items = []
    for i, (colour, other) in enumerate((("red", "green"), ("yellow", "blue"), ("green", "red"))):
        image = picture([Shape("square", colour, (24, 24, 104, 104))], SIZE)
        gap = "  " if i == 0 else " "
        items.append((image, [(f"Is there a {colour} square in the image?{gap}{ASK.strip()}", "Yes"),
                              (f"Is there a {other} square in the image?{ASK}", "No")]))
    return items


def ocr() -> list[tuple[Image.Image, list[tuple[str, str]]]]:
    """A written word; the No question asks for a near miss."""
    return [(word_picture(word, SIZE), [(f'Is the word in the image "{word}"?{ASK}', "Yes"),
                               (f'Is the word in the image "{miss}"?{ASK}', "No")])
            for word, miss in (("MMBATCH", "MMBACTH"), ("seed", "send"), ("Yes", "Yet"))]


def numerical_calculation() -> list[tuple[Image.Image, list[tuple[str, str]]]]:
    """A written sum; the No question offers a wrong result."""
    return [(word_picture(f"{a} + {b} =", SIZE),
             [(f"Is the answer to the arithmetic question in the image {a + b}?{ASK}", "Yes"),
              (f"Is the answer to the arithmetic question in the image {a + b + 2}?{ASK}", "No")])
            for a, b in ((3, 4), (12, 5))]


SUBTASKS = {
    "existence": (existence, False),
    "count": (count, False),
    "color": (color, True),
    "OCR": (ocr, True),
    "numerical_calculation": (numerical_calculation, False),
}
"""Subtask -> (item maker, whether it uses the images/ + questions_answers_YN/ layout)."""


def generate(out_dir: Path) -> Path:
    """Write ``out_dir/mme/`` from scratch and return it."""
    root = out_dir / "mme"
    if root.exists():
        shutil.rmtree(root)
    for subtask, (make_items, split_layout) in SUBTASKS.items():
        image_dir = root / subtask / "images" if split_layout else root / subtask
        text_dir = root / subtask / "questions_answers_YN" if split_layout else root / subtask
        image_dir.mkdir(parents=True, exist_ok=True)
        text_dir.mkdir(parents=True, exist_ok=True)
        for number, (image, questions) in enumerate(make_items(), start=1):
            stem = f"{subtask.lower()}_{number:02d}"
            image.save(image_dir / f"{stem}.png", optimize=True)
            lines = "".join(f"{question}\t{answer}\n" for question, answer in questions)
            (text_dir / f"{stem}.txt").write_text(lines, encoding="utf-8", newline="\n")
    return root


def main(argv: list[str] | None = None) -> int:
    """Command line: ``mme.py [OUT_DIR]``."""
    args = sys.argv[1:] if argv is None else argv
    out_dir = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    print(f"wrote {generate(out_dir)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
