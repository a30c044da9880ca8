"""What the viewer shows: every row of the given files, matched across models on (benchmark, split, index).

Question, options, hint, prompt and pictures come from the first file that has the row; each model contributes its
answer, how the choice was extracted (rule, the judge's prompt and raw reply, option log-probs or CLIP
similarities) and its verdict. Prediction and extracted files carry no image payload (``infer`` drops it), so the
pictures of MMBench-style rows come from ``--images`` (the prepared file or the benchmark TSV); SEED rows' pictures
and video frames are read under the media root, confined to it like ``infer`` does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.answers.frames import nulls
from mmbatch.answers.scores import SCORE
from mmbatch.benchmarks.registry import answer_kinds
from mmbatch.errors import BadInputError
from mmbatch.infer.requests import default_media_root
from mmbatch.media import is_reference, media_paths, resolve_media, split_image_cell
from mmbatch.report.inputs import display_name
from mmbatch.row_facts import is_missing, missing, present_options
from mmbatch.score.hits import FAILED, HIT, UNMATCHED, add_hits, file_scores
from mmbatch.tableio import read_table
from mmbatch.view.thumbnails import ThumbnailStore

PROMPT = "_judge_prompt"
"""Column the viewer adds for the judge's prompt of judged rows."""
MAX_TEXT = 20_000
"""Characters kept of any one text cell (a runaway generation or judge reply is cut, and says so)."""


@dataclass(frozen=True)
class ViewOptions:
    """Options of ``mmbatch view``."""

    images: Path | None = None
    """A prepared file or benchmark TSV whose ``image`` column holds the rows' pictures (matched on ``index``)."""
    media_root: Path | None = None
    """Folder that ``image_path``/``video_path`` are relative to (default: recorded by prepare, else the file's)."""
    num_frames: int = 4
    """Video frames shown per video row."""
    labels: tuple[tuple[str, str], ...] = ()
    """(file path, display name) pairs naming the models."""


@dataclass
class ViewData:
    """Everything the page embeds."""

    models: list[str]
    """Display name of each file's model, in file order."""
    rows: list[dict[str, Any]] = field(default_factory=list)
    """One record per (benchmark, split, index)."""
    pictures: ThumbnailStore = field(default_factory=ThumbnailStore)
    """Embedded thumbnails."""
    notes: list[str] = field(default_factory=list)
    """Things the user should know (pictures that could not be shown, ...)."""


def gather_rows(paths: list[Path], options: ViewOptions) -> ViewData:
    """Read every file and build the viewer's records.

    Raises:
        BadInputError: a file is unreadable or is not a stage file with ``index`` and ``question``, or a label
            names a file that is not shown (a typo would otherwise leave the model unnamed without a word).
    """
    labels = dict(options.labels)
    unknown = sorted(set(labels) - {str(p) for p in paths})
    if unknown:
        raise BadInputError(f"--label names a file that is not shown: {unknown[0]}")
    tables = [read_table(path) for path in paths]
    frames = [_with_hits(file_scores(t.frame, t.metadata), path) for t, path in zip(tables, paths, strict=True)]
    names = [_model_name(frame, path, labels) for frame, path in zip(frames, paths, strict=True)]
    if len(set(names)) < len(names):
        names = [f"{name} [{path.stem}]" for name, path in zip(names, paths, strict=True)]
    data = ViewData(names)
    pictures = _PictureSource(options, data, tables[0].metadata, paths[0])
    records: dict[tuple[str, str, int], dict[str, Any]] = {}
    for position, frame in enumerate(frames):
        pictures.add_payloads(frame)
        generated = _GeneratedPictures(paths[position], tables[position].metadata, data) \
            if GENERATED_IMAGE in frame.columns else None
        for row in frame.iter_rows(named=True):
            key = (str(row.get("benchmark") or ""), str(row.get("split") or ""), int(row["index"]))
            record = records.get(key)
            if record is None:
                record = records[key] = _question_record(row, key, len(names))
                record["img"], record["vid"] = pictures.of_row(row)
            record["m"][position] = _answer_record(row)
            if generated is not None:
                record["m"][position]["gen"] = generated.of_row(row)
    data.rows = sorted(records.values(), key=lambda r: (r["b"], r["s"], r["g"], r["i"]))
    if data.pictures.failures:
        data.notes.append(f"{data.pictures.failures} picture(s) could not be decoded and are not shown")
    if data.pictures.refused:
        data.notes.append(f"{len(data.pictures.refused)} media path(s) refused and not shown (first: "
                          f"{data.pictures.refused[0]})")
    return data


def _with_hits(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    missing = [c for c in ("index", "question") if c not in frame.columns]
    if missing:
        raise BadInputError(f"the viewer needs rows with {', '.join(missing)}: give it extracted or hits files",
                            path=path)
    if not {"extracted", "answer", "benchmark"} <= set(frame.columns):
        return frame
    frame = _with_judge_prompts(frame)
    return frame if HIT in frame.columns else add_hits(frame).drop(UNMATCHED, FAILED)


def _model_name(frame: pl.DataFrame, path: Path, labels: Mapping[str, str]) -> str:
    if str(path) in labels:
        return labels[str(path)]
    if "model" in frame.columns:
        models = [str(m) for m in frame["model"].drop_nulls().unique(maintain_order=True).to_list()]
        if len(models) == 1:
            return display_name(models[0])
    return path.stem


def _text(value: Any) -> str | None:
    if is_missing(value):
        return None
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f" … [cut at {MAX_TEXT} characters]"


def _question_record(row: Mapping[str, Any], key: tuple[str, str, int], models: int) -> dict[str, Any]:
    g_index = row.get("g_index")
    return {
        "k": "|".join(str(part) for part in key), "b": key[0], "s": key[1], "i": key[2],
        "g": int(g_index) if g_index is not None else key[2],
        "c": _text(row.get("category")), "l2": _text(row.get("l2-category")), "dt": _text(row.get("data_type")),
        "q": _text(row.get("question")) or "", "h": _text(row.get("hint")), "o": present_options(row),
        "a": _text(row.get("answer")), "p": _text(row.get("prompt")), "m": [None] * models,
    }


def _answer_record(row: Mapping[str, Any]) -> dict[str, Any]:
    method = _text(row.get("extract_method"))
    record: dict[str, Any] = {
        "pred": _text(row.get("prediction")), "x": _text(row.get("extracted")), "em": method,
        "jm": _text(row.get("judge_model")), "jr": _text(row.get("judge_raw")), "note": _text(row.get("extract_note")),
        "err": _text(row.get("error")), "hit": None if row.get(HIT) is None else int(row[HIT]),
        "sc": None if row.get(SCORE) is None else float(row[SCORE]),
        "lp": _numbers(row.get("choice_logprobs")), "sim": _numbers(row.get("choice_similarities")),
    }
    if method == "judge":
        record["jp"] = row.get(PROMPT)
    return record


def _numbers(values: Any) -> list[float | None] | None:
    if values is None:
        return None
    return [float(v) if v is not None and math.isfinite(float(v)) else None for v in values]


def _with_judge_prompts(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``_judge_prompt`` on the rows the judge decided: the prompt the judge was sent, built again by
    each row's answer kind from the same cells (what extract read: ``answer_text``, else the prediction)."""
    judged = pl.col("extract_method") == "judge"
    if "extract_method" not in frame.columns or not frame.select(judged.any()).item():
        return frame
    if "answer_text" in frame.columns:
        text = pl.col("answer_text").fill_null("")
    elif "prediction" in frame.columns:  # extracted before answer_text was written: the prediction was read
        text = pl.when(missing("prediction")).then(pl.lit("")).otherwise(pl.col("prediction").cast(pl.String))
    else:
        text = pl.lit("")
    source = frame.with_columns(text.alias("answer_text"))
    prompts = nulls(PROMPT, frame.height, pl.String)
    for name, kind in answer_kinds(frame["benchmark"].cast(pl.String).unique(maintain_order=True)).items():
        mask = source.select(judged.fill_null(False) & (pl.col("benchmark") == name).fill_null(False)).to_series()
        if kind.judge is not None and mask.any():
            prompts = prompts.scatter(mask.arg_true(), kind.judge.prompts(source.filter(mask)))
    return frame.with_columns(prompts)


class _PictureSource:
    """Finds each row's pictures: base64 ``image`` cells (its own file's or ``--images``), or media files."""

    def __init__(self, options: ViewOptions, data: ViewData, metadata: Mapping[str, Any], first: Path) -> None:
        self.options = options
        self.data = data
        self.payloads: dict[int, str] = {}
        self._metadata = dict(metadata)
        self._first = first
        self._root: Path | bool | None = False  # False: not looked up yet (rows without media never need it)
        if options.images is not None:
            self.add_payloads(read_table(options.images).frame)

    def add_payloads(self, frame: pl.DataFrame) -> None:
        """Remember the ``image`` cells of ``frame`` by index (references resolve against them)."""
        if "image" not in frame.columns:
            return
        for index, cell in frame.select("index", "image").iter_rows():
            if cell is not None and int(index) not in self.payloads:
                self.payloads[int(index)] = str(cell)

    def of_row(self, row: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        """(picture ids, video frame ids) of a row."""
        pictures: list[str] = []
        cell = self.payloads.get(int(row["index"]))
        if cell is not None and is_reference(cell):
            cell = self.payloads.get(int(float(cell))) if _is_number(cell) else None
        if cell is not None:
            pictures += [p for p in (self.data.pictures.from_base64(item) for item in split_image_cell(cell)) if p]
        for column in ("image_path", "option_image_paths"):
            if not is_missing(row.get(column)):
                pictures += [p for p in (self._file(rel, row, column) for rel in media_paths(str(row[column]))) if p]
        frames = self._video(row) if not is_missing(row.get("video_path")) else []
        return pictures, frames

    @property
    def media_root(self) -> Path | None:
        """The media folder, confined as ``infer`` confines it; None (and a note) when the file's is refused."""
        if self._root is False:
            try:
                self._root = default_media_root(self._first, self._metadata, self.options.media_root)
            except BadInputError as error:  # the page still shows every row, only without these pictures
                self._root = None
                self.data.notes.append(f"media pictures not shown: {error}")
        return self._root if isinstance(self._root, Path) else None

    def _file(self, relative: str, row: Mapping[str, Any], column: str) -> str | None:
        if self.media_root is None:
            return None
        try:
            return self.data.pictures.from_file(resolve_media(self.media_root, relative, index=row["index"],
                                                              column=column))
        except BadInputError as error:  # never read: counted apart from pictures that failed to decode
            self.data.pictures.refused.append(error.reason)
            return None

    def _video(self, row: Mapping[str, Any]) -> list[str]:
        from mmbatch.video import FrameRequest, read_frame_files, read_video_frames

        paths = media_paths(str(row["video_path"]))
        if self.media_root is None:
            return []
        try:
            files = [resolve_media(self.media_root, rel, index=row["index"], column="video_path") for rel in paths]
            if len(files) > 1:
                images = read_frame_files(files, self.options.num_frames)
            else:
                images = read_video_frames(files[0], FrameRequest(num_frames=self.options.num_frames)).images
        except (BadInputError, ValueError, OSError, ImportError) as error:
            self.data.notes.append(f"row {row['index']}: video frames not shown ({error})")
            return []
        return [self.data.pictures.from_image(image, f"{paths}#{n}") for n, image in enumerate(images)]


GENERATED_IMAGE = "generated_image"
"""The predictions column naming the picture a model drew (SEED-Bench-2 level 3), relative to the predictions file's
folder."""


class _GeneratedPictures:
    """The pictures one model drew: ``generated_image`` is relative to its predictions file's folder, which is the
    viewed file's own folder when extract and score wrote beside it, else the folder of the predictions file
    ``extract`` recorded. The picture must lie inside that folder (as ``extract`` reads it)."""

    def __init__(self, path: Path, metadata: Mapping[str, Any], data: ViewData) -> None:
        self.data = data
        self.folders = [path.parent]
        recorded = metadata.get("extract", {}).get("input") if isinstance(metadata.get("extract"), dict) else None
        if isinstance(recorded, str) and recorded:
            self.folders += [Path(recorded).parent, path.parent / Path(recorded).parent]

    def of_row(self, row: Mapping[str, Any]) -> str | None:
        """The id of the row's generated picture; None (and a note) when it cannot be found."""
        if is_missing(row.get(GENERATED_IMAGE)):
            return None
        relative = str(row[GENERATED_IMAGE])
        for folder in self.folders:
            try:
                return self.data.pictures.from_file(resolve_media(folder, relative, index=row["index"],
                                                                  column=GENERATED_IMAGE))
            except BadInputError:
                continue
        self.data.notes.append(f"row {row['index']}: generated picture {relative!r} not found beside the file or its "
                               "predictions file")
        return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def page_data(data: ViewData) -> str:
    """The JSON the page script reads, with every ``<`` written ``\\u003c``: no ``</script>`` can close the script
    element and no ``<!--`` can make the HTML parser swallow the page's own script (JSON reads both the same)."""
    document = {"models": data.models, "rows": data.rows, "pictures": data.pictures.images, "notes": data.notes}
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
