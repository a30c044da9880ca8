"""The MME question files as released: the official release folder and the official eval tool's templates.

Release folder (``MME_Benchmark_release_version/``), one folder per subtask, in either of two shapes::

    existence/000000006040.jpg            artwork/images/10002.jpg
    existence/000000006040.txt            artwork/questions_answers_YN/10002.txt

where each ``.txt`` holds the two ``question<TAB>answer`` lines of the image with the same stem.

Eval tool templates (``eval_tool/Your_Results/``, read by :mod:`mmbatch.benchmarks.mme.tool_files`): one
``<subtask>.txt`` per subtask with lines ``image_name<TAB>question<TAB>ground_truth`` (a fourth ``<TAB>prediction``
field, if present, is ignored here). They hold no images: those are looked up in the release folder given as
``--media-root``.

Question texts are kept byte for byte (7 questions have a double space before "Please answer yes or no.").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mmbatch.benchmarks.mme.subtasks import canonical_subtask, subtask_order
from mmbatch.benchmarks.mme.tool_files import read_tool_lines
from mmbatch.errors import BadInputError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")
"""Extensions recognised as images beside a question file (compared case-insensitively)."""

SPLIT_LAYOUT = ("images", "questions_answers_YN")
"""The sub-folders of a subtask released as separate image and question folders."""


@dataclass(frozen=True)
class MmeQuestion:
    """One MME question as read from a text file."""

    subtask: str
    """Subtask name in the official spelling (``OCR``, ``existence``...)."""
    image_name: str
    """The image's file name as the official eval tool writes it (``000000006040.jpg``)."""
    image_file: Path
    """Where the image is on disk (absolute), or where it should be when it is missing."""
    question: str
    """The question exactly as written in the file."""
    answer: str
    """``Yes`` or ``No``."""
    source: Path
    """The text file the question comes from."""
    line: int
    """1-based line number in ``source``."""


def read_release_folder(root: Path) -> list[MmeQuestion]:
    """All questions of a release folder (or of one subtask folder), subtasks in the official order.

    Raises:
        BadInputError: no subtask folder, a malformed line, an answer other than yes/no, or a question file
            without its image.
    """
    subtask_dirs = [d for d in sorted(root.iterdir()) if d.is_dir() and is_subtask_dir(d)]
    if not subtask_dirs and is_subtask_dir(root):
        subtask_dirs = [root]
    if not subtask_dirs:
        raise BadInputError("no MME subtask folder here (expected <subtask>/ with images and .txt question files, "
                            "or <subtask>/images/ + <subtask>/questions_answers_YN/)", path=root)
    subtask_dirs.sort(key=lambda d: (subtask_order(d.name), d.name))
    questions: list[MmeQuestion] = []
    for folder in subtask_dirs:
        questions += _read_subtask_dir(folder)
    return questions


def is_subtask_dir(folder: Path) -> bool:
    """Whether ``folder`` looks like one released subtask (question files of two fields, or the split layout)."""
    if (folder / SPLIT_LAYOUT[1]).is_dir():
        return True
    texts = sorted(folder.glob("*.txt"))
    return bool(texts) and _field_count(texts[0]) == 2


def _read_subtask_dir(folder: Path) -> list[MmeQuestion]:
    subtask = canonical_subtask(folder.name)
    if (folder / SPLIT_LAYOUT[1]).is_dir():
        text_dir, image_dir = folder / SPLIT_LAYOUT[1], folder / SPLIT_LAYOUT[0]
    else:
        text_dir = image_dir = folder
    images = _images_by_stem(image_dir)
    questions: list[MmeQuestion] = []
    for text_file in sorted(text_dir.glob("*.txt")):
        image = images.get(text_file.stem)
        if image is None:
            raise BadInputError(f"no image named {text_file.stem}.* in {image_dir} for this question file",
                                path=text_file, column="image")
        for line_no, fields in _lines(text_file):
            if len(fields) != 2:
                raise BadInputError(f"line {line_no}: expected 'question<TAB>answer', found {len(fields)} "
                                    "tab-separated fields", path=text_file, column="question")
            questions.append(MmeQuestion(subtask, image.name, image, fields[0],
                                         yes_no(fields[1], text_file, line_no), text_file, line_no))
    return questions


def read_eval_tool_templates(path: Path, media_root: Path | None) -> list[MmeQuestion]:
    """All questions of the eval tool's ``<subtask>.txt`` files (a folder of them, or one file).

    Images are looked up as ``<subtask>/<image_name>`` or ``<subtask>/images/<image_name>`` under ``media_root``.

    Raises:
        BadInputError: no media root, a malformed line or an answer other than yes/no.
    """
    if media_root is None:
        raise BadInputError("the MME eval tool's question files name images but hold none: give --media-root, "
                            "the MME release folder (MME_Benchmark_release_version)", path=path)
    files = [path] if path.is_file() else sorted(path.glob("*.txt"))
    files.sort(key=lambda f: (subtask_order(f.stem), f.stem))
    questions: list[MmeQuestion] = []
    for text_file in files:
        subtask = canonical_subtask(text_file.stem)
        subtask_root = _subtask_folder(media_root, text_file.stem)
        for line in read_tool_lines(text_file, fields=(3, 4)):
            image_name, question, answer = line.fields[:3]
            image = subtask_root / image_name
            if not image.is_file() and (subtask_root / SPLIT_LAYOUT[0] / image_name).is_file():
                image = subtask_root / SPLIT_LAYOUT[0] / image_name
            questions.append(MmeQuestion(subtask, image_name, image, question,
                                         yes_no(answer, text_file, line.number), text_file, line.number))
    return questions


def is_eval_tool_template(path: Path) -> bool:
    """Whether ``path`` is an eval tool question file, or a folder of them (lines of 3 or 4 fields)."""
    if path.is_file():
        return path.suffix.lower() == ".txt" and _field_count(path) in (3, 4)
    texts = sorted(path.glob("*.txt"))
    return bool(texts) and _field_count(texts[0]) in (3, 4)


def yes_no(text: str, source: Path, line: int) -> str:
    """The ground truth as ``Yes``/``No`` (any case, surrounding spaces ignored).

    Raises:
        BadInputError: anything else.
    """
    value = text.strip().capitalize()
    if value not in ("Yes", "No"):
        raise BadInputError(f"line {line}: the answer must be Yes or No, not {text!r}", path=source, column="answer")
    return value


def _subtask_folder(media_root: Path, stem: str) -> Path:
    """The release sub-folder of a subtask, matching the name case-insensitively (``OCR`` vs ``ocr``)."""
    exact = media_root / stem
    if exact.is_dir() or not media_root.is_dir():
        return exact
    for child in media_root.iterdir():
        if child.is_dir() and child.name.lower() == stem.lower():
            return child
    return exact


def _images_by_stem(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.iterdir()) if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()}


def _lines(text_file: Path) -> list[tuple[int, list[str]]]:
    """The non-blank lines of a release folder's per-image question file, split on tabs.

    Only trailing whitespace is removed: it can only belong to the last field (the answer, or an ignored
    prediction), never to the question.
    """
    try:
        text = text_file.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"the file is not UTF-8 ({exc.reason} at byte {exc.start})", path=text_file) from exc
    lines = []
    for line_no, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip()
        if line:
            lines.append((line_no, line.split("\t", 3)))
    return lines


def _field_count(text_file: Path) -> int:
    """Tab-separated fields on the first non-blank line (0 for an empty or unreadable file)."""
    try:
        with text_file.open(encoding="utf-8-sig", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    return len(line.rstrip().split("\t"))
    except OSError:
        return 0
    return 0
