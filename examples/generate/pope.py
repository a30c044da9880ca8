"""Write ``examples/pope/pope_example.tsv``: a tiny POPE table in VLMEvalKit's layout, drawn pictures for images.

Each picture holds one or two shapes; every question asks whether a shape is in the picture (Yes when it is). The
rows use all three splits, one row belongs to two of them (VLMEvalKit merges such a question into one row with the
splits comma-separated in ``category``), and later rows refer to an earlier row's image by its ``index``, as the
real file does. The output is byte-for-byte the same on every run.

Usage: ``python examples/generate/pope.py [OUT_DIR]`` (default ``examples/``; writes ``OUT_DIR/pope/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drawing import Shape, base64_image, picture

SIZE = 96
PICTURES = [
    [Shape("circle", "red", (20, 20, 70, 70))],
    [Shape("square", "blue", (10, 10, 45, 45)), Shape("triangle", "green", (50, 50, 90, 90))],
    [Shape("triangle", "yellow", (20, 20, 76, 76))],
]
"""The pictures, by position; each question below names one."""
QUESTIONS = [  # (picture, shape asked about, split(s))
    (0, "circle", "adversarial"), (0, "square", "adversarial"), (1, "square", "popular"),
    (1, "circle", "popular,random"), (1, "triangle", "random"), (2, "triangle", "adversarial"),
    (2, "square", "random"), (0, "triangle", "popular"),
]


def rows() -> list[dict[str, str]]:
    """The table's rows: the first question on a picture carries it in base64, later ones refer to that row."""
    first_row: dict[int, int] = {}
    table = []
    for position, (number, shape, splits) in enumerate(QUESTIONS):
        index = position + 1
        shown = {item.kind for item in PICTURES[number]}
        if number in first_row:
            image = str(first_row[number])
        else:
            first_row[number] = index
            image = base64_image(picture(PICTURES[number], SIZE))
        table.append({"index": str(index), "question": f"Is there a {shape} in the image?",
                      "answer": "Yes" if shape in shown else "No", "category": splits, "image": image})
    return table


def generate(out_dir: Path) -> Path:
    """Write ``out_dir/pope/pope_example.tsv`` and return it."""
    target = out_dir / "pope" / "pope_example.tsv"
    target.parent.mkdir(parents=True, exist_ok=True)
    columns = ["index", "question", "answer", "category", "image"]
    lines = ["\t".join(columns)] + ["\t".join(row[c] for c in columns) for row in rows()]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    return target


def main(argv: list[str] | None = None) -> int:
    """Command line: ``pope.py [OUT_DIR]``."""
    args = sys.argv[1:] if argv is None else argv
    out_dir = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    print(f"wrote {generate(out_dir)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
