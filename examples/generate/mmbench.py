"""Write ``examples/mmbench/``: small MMBench-style files whose drawn images make every answer true.

- ``mmbench_example.tsv``: the VLMEvalKit layout. 28 questions, each original row with its base64 image, circular
  copies as extra rows (``index + k * 1_000_000``) whose ``image`` is a short reference to the original's index.
  Groups of 1 to 4 rows; a NaN hint and a multi-line hint; a question whose option C is missing (A, B, D, not
  relabelled, left as a group of one); an option whose text is ``None``; Chinese questions; two-image rows written as
  a Python-list string; ``l2-category``, ``category``, ``split`` and two extra columns (``source``, ``comment``).
- ``mmbench_legacy_example.tsv``: the same rows, every copy carrying its own full image (the ``*_legacy.tsv`` layout).
- ``mcq_plain_example.tsv``: only the original questions, as a user would write an MCQ file;
  ``mmbatch prepare --circular`` on it gives exactly the rows of ``mmbench_example.tsv``.

Circular copies are made here independently of mmbatch (docs/rules.md §1), so the files double as golden data.
Usage: ``python examples/generate/mmbench.py [OUT_DIR]`` (default ``examples/``; writes ``OUT_DIR/mmbench/``).
"""

from __future__ import annotations

import string
import sys
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drawing import Shape, base64_image, count_picture, picture, word_picture

COPY_OFFSET = 1_000_000
FIRST_INDEX = 100
L2 = {
    "attribute_recognition": "finegrained_perception (instance-level)",
    "object_localization": "finegrained_perception (instance-level)",
    "ocr": "finegrained_perception (instance-level)",
    "spatial_relationship": "finegrained_perception (cross-instance)",
    "attribute_comparison": "finegrained_perception (cross-instance)",
    "image_topic": "coarse_perception",
    "physical_relation": "relation_reasoning",
}
COLOUR_OPTIONS = ["red", "green", "blue", "yellow"]
SHAPE_OPTIONS = ["circle", "square", "triangle", "star"]


@dataclass(frozen=True)
class Question:
    """One original question."""

    question: str
    options: dict[str, str]
    answer: str
    category: str
    images: list[str]
    hint: str | None = None
    split: str = "dev"
    comment: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


def one_shape(kind: str, colour: str) -> str:
    return base64_image(picture([Shape(kind, colour, (20, 20, 76, 76))]))


def questions() -> list[Question]:
    """The original questions, answers read off the drawings."""
    items: list[Question] = []
    for kind, colour, hint in [("circle", "red", None), ("square", "blue", "The picture shows one shape."),
                               ("triangle", "yellow", None), ("star", "green", None),
                               ("circle", "blue", "Look carefully.\nThe picture is small."), ("square", "red", None)]:
        items.append(Question(f"What colour is the {kind}?", dict(zip("ABCD", COLOUR_OPTIONS, strict=True)),
                              "ABCD"[COLOUR_OPTIONS.index(colour)], "attribute_recognition",
                              [one_shape(kind, colour)], hint=hint))
    for kind in ["triangle", "star", "circle"]:
        items.append(Question("Which shape is shown in the picture?", dict(zip("ABCD", SHAPE_OPTIONS, strict=True)),
                              "ABCD"[SHAPE_OPTIONS.index(kind)], "image_topic", [one_shape(kind, "black")],
                              split="test"))
    for left, right, asked, answer in [("circle", "square", "circle", "A"), ("star", "triangle", "triangle", "B"),
                                       ("square", "circle", "square", "A")]:
        image = base64_image(picture([Shape(left, "red", (4, 30, 40, 66)), Shape(right, "blue", (56, 30, 92, 66))]))
        items.append(Question(f"On which side of the picture is the {asked}?", {"A": "left", "B": "right"},
                              answer, "spatial_relationship", [image]))
    for count, kind in [(2, "square"), (3, "circle"), (4, "triangle"), (3, "star")]:
        options = {"A": "2", "B": "3", "C": "4"}
        answer = next(letter for letter, text in options.items() if text == str(count))
        items.append(Question(f"How many {kind}s are there in the picture?", options, answer, "object_localization",
                              [base64_image(count_picture(count, kind, "green"), "JPEG")],
                              comment="drawn on a 3x3 grid"))
    for word in ["CAT", "BUS", "MAP"]:
        options = dict(zip("ABCD", ["CAT", "DOG", "BUS", "MAP"], strict=True))
        answer = next(letter for letter, text in options.items() if text == word)
        items.append(Question("What word is written in the image?", options, answer, "ocr",
                              [base64_image(word_picture(word))], split="dev" if word != "MAP" else "test"))
    chinese = dict(zip("ABCD", ["红色", "绿色", "蓝色", "黄色"], strict=True))
    items.append(Question("图中的圆形是什么颜色？", chinese, "A", "attribute_recognition", [one_shape("circle", "red")],
                          hint="图中只有一个形状。"))
    items.append(Question("图中的正方形是什么颜色？", chinese, "D", "attribute_recognition",
                          [one_shape("square", "yellow")]))
    for first, second, answer in [(2, 5, "B"), (6, 1, "A")]:
        images = [base64_image(count_picture(first, "circle", "blue")),
                  base64_image(count_picture(second, "circle", "blue"))]
        items.append(Question("Which image shows more circles?", {"A": "The first image", "B": "The second image"},
                              answer, "attribute_comparison", images))
    empty_square = base64_image(picture([Shape("square", "black", (20, 20, 76, 76)),
                                         Shape("square", "yellow", (30, 30, 66, 66))]))
    items.append(Question("What is drawn inside the black square?",
                          {"A": "a circle", "B": "a star", "C": "None"}, "C", "physical_relation", [empty_square],
                          comment="the option text None must stay text"))
    items.append(Question("What colour is the triangle?", {"A": "red", "B": "blue", "D": "green"}, "D",
                          "attribute_recognition", [one_shape("triangle", "green")],
                          comment="option C is missing: A, B, D are not relabelled"))
    items.append(Question("Which statement about the two shapes is true?",
                          {"A": "Both are circles", "B": "Both are squares", "C": "Neither A nor B"}, "A",
                          "spatial_relationship",
                          [base64_image(picture([Shape("circle", "red", (4, 30, 40, 66)),
                                                 Shape("circle", "red", (56, 30, 92, 66))]))],
                          comment="an option names two letters: no circular copies"))
    for present, answer in [(True, "A"), (False, "B")]:
        shapes = [Shape("triangle", "blue", (20, 20, 76, 76))] if present else [Shape("circle", "blue",
                                                                                      (20, 20, 76, 76))]
        items.append(Question("Is there a triangle in the picture?", {"A": "Yes", "B": "No"}, answer,
                              "object_localization", [base64_image(picture(shapes))]))
    return items


def rotated(question: Question, k: int) -> tuple[dict[str, str], str]:
    """Copy ``k``: labels rotated right ``k`` times, the text of ``labels[j]`` moving to ``labels[(j - k) % n]``."""
    labels = list(question.options)
    n = len(labels)
    options = {labels[(j - k) % n]: question.options[label] for j, label in enumerate(labels)}
    answer = labels[(labels.index(question.answer) - k) % n]
    return dict(sorted(options.items())), answer


def gets_copies(question: Question) -> bool:
    """The protocol's rows left alone: gaps in the letters, letter-like option texts, options naming letters."""
    labels = list(question.options)
    if labels != list(string.ascii_uppercase[: len(labels)]) or len(labels) < 2:
        return False
    for text in question.options.values():
        words = set("".join(c if c in string.ascii_letters else " " for c in text).split())
        if text.strip() in string.ascii_uppercase or len(words & set(labels)) >= 2:
            return False
    return True


def image_cell(images: list[str]) -> str:
    """One base64 image, or several as a Python-list string (the VLMEvalKit multi-image form)."""
    return images[0] if len(images) == 1 else repr(images)


def row(question: Question, index: int, options: dict[str, str], answer: str, image: str) -> dict[str, str | None]:
    cells: dict[str, str | None] = {"index": str(index), "question": question.question, "hint": question.hint}
    cells.update({letter: options.get(letter) for letter in "ABCD"})
    cells.update({"answer": answer, "category": question.category, "l2-category": L2[question.category],
                  "split": question.split, "image": image, "source": "mmbatch-example",
                  "comment": question.comment})
    return cells


def tables(items: list[Question]) -> dict[str, pl.DataFrame]:
    """The three files' rows: VLMEvalKit layout, legacy layout, plain questions."""
    originals = [row(q, FIRST_INDEX + i, q.options, q.answer, image_cell(q.images)) for i, q in enumerate(items)]
    referenced, legacy = [], []
    for k in range(1, 4):
        for i, q in enumerate(items):
            if not gets_copies(q) or k >= len(q.options):
                continue
            options, answer = rotated(q, k)
            index = FIRST_INDEX + i
            referenced.append(row(q, index + k * COPY_OFFSET, options, answer, str(index)))
            legacy.append(row(q, index + k * COPY_OFFSET, options, answer, image_cell(q.images)))
    schema = dict.fromkeys(originals[0], pl.String)
    return {
        "mmbench_example.tsv": pl.DataFrame(originals + referenced, schema=schema),
        "mmbench_legacy_example.tsv": pl.DataFrame(originals + legacy, schema=schema),
        "mcq_plain_example.tsv": pl.DataFrame(originals, schema=schema),
    }


def main(out: Path) -> None:
    """Write the files into ``out/mmbench/``."""
    folder = out / "mmbench"
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in tables(questions()).items():
        frame.write_csv(folder / name, separator="\t", quote_style="necessary", null_value="")
        groups = (frame["index"].cast(pl.Int64) % COPY_OFFSET).n_unique()
        print(f"{folder / name}: {frame.height} rows, {groups} questions")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
