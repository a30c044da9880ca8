"""Prepared rows -> backend :class:`~mmbatch.backends.base.Request` objects.

Where a row's pictures come from, in order of preference:

- ``image``: base64, a list-string of base64 images, or a short reference to another row's ``index`` anywhere in
  the prepared file (not only in the shard), whose ``image`` holds the payload (docs/rules.md §1);
- ``image_path``: one file or a JSON list of files under the media root;
- ``video_path``: a video file (frames chosen by the SEED-Bench rule, :mod:`mmbatch.video`) or a JSON list of frame
  files.

generate-image rows also get the files of their option images (``option_image_paths``; only the ``echo`` backend
reads them). Likelihood rows also get their continuations: the present options' texts in letter order (``content``) or
``A.``, ``B.``.. (``letter``). A row whose media is missing or broken raises :class:`RowError`; the stage records it
in the row's ``error`` and goes on.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from pathlib import Path
from typing import Any

import polars as pl
from PIL import Image

from mmbatch.backends.base import FrameTiming, Request
from mmbatch.errors import BadInputError
from mmbatch.media import (
    decode_base64_image,
    is_reference,
    load_image,
    media_paths,
    reference_index,
    resolve_media,
    split_image_cell,
)
from mmbatch.prompts import is_missing
from mmbatch.schema.columns import option_columns
from mmbatch.stage_records import PrepareRecord
from mmbatch.video import FrameRequest, read_frame_files, read_video_frames

DECODED_CACHE_SIZE = 32
"""Decoded images kept by the ``index`` of the row holding them: circular copies have prompts of the same length,
so they sit next to each other in the run order and reuse the original's decoded image instead of decoding it again.
Backends only read request images, so sharing them between requests is safe."""

SEED_BENCHMARK = "seedbench"
"""Only SEED-Bench-1 rows read ``question_type_id`` as the dimension that decides the frame rule."""


class RowError(Exception):
    """A row cannot be given to the model (missing or corrupt media); the message names the column."""


def default_media_root(input_path: Path, metadata: dict[str, Any], chosen: Path | None = None) -> Path:
    """The folder media paths are read from, confined to a folder chosen by the person running the stage.

    The confining folder is ``chosen`` (``--media-root`` or ``MMBATCH_MEDIA_ROOT``), else the prepared file's own
    folder. The root recorded by ``prepare`` (absolute, or relative to the prepared file) is used only when it lies
    inside that folder: a prepared file from elsewhere cannot make a stage read, or upload, files outside it.

    Raises:
        BadInputError: no root was chosen and the recorded one lies outside the prepared file's folder (the message
            says how to allow it).
    """
    confining = (chosen if chosen is not None else input_path.parent).resolve()
    record = PrepareRecord.from_metadata(metadata)
    recorded = (record.media_root if record is not None else None) or metadata.get("media_root")
    if not recorded or not isinstance(recorded, str):
        return confining
    candidate = (input_path.parent / recorded).resolve()  # an absolute recorded root stays as it is
    if candidate.is_relative_to(confining):
        return candidate
    if chosen is not None:
        return confining
    raise BadInputError(
        f"the file records the media root {recorded!r}, outside its own folder {str(confining)!r}; media is read "
        f"only from a folder you choose: pass --media-root {recorded!r} (or set MMBATCH_MEDIA_ROOT) if you trust it",
        path=input_path)


class RequestBuilder:
    """Builds requests for rows of one prepared file.

    Args:
        prepared: the whole prepared file (image references may point at rows of other shards).
        media_root: the folder ``image_path``/``video_path`` are relative to.
        num_frames: frames to sample from each video.
        likelihood_target: ``content`` or ``letter``.
        max_pixels: largest accepted image.
    """

    def __init__(self, prepared: pl.DataFrame, *, media_root: Path, num_frames: int = 8,
                 likelihood_target: str = "content", max_pixels: int = 64_000_000) -> None:
        self.media_root = media_root
        self.num_frames = num_frames
        self.likelihood_target = likelihood_target
        self.max_pixels = max_pixels
        self.letters = option_columns(prepared.columns)
        self._images = prepared["image"] if "image" in prepared.columns else None
        self._position = {int(index): row for row, index in enumerate(prepared["index"].to_list())}
        self._decoded: OrderedDict[int, list[Image.Image]] = OrderedDict()

    def build(self, row: dict[str, Any]) -> Request:
        """The request for one prepared row (a dict of its cells).

        Raises:
            RowError: the row's media is missing, corrupt or over the pixel limit.
        """
        images, is_video, timing = self._media(row)
        present = [letter for letter in self.letters if not is_missing(row.get(letter))]
        answer = None if is_missing(row.get("answer")) else str(row["answer"]).strip()
        request = Request(index=int(row["index"]), prompt=str(row["prompt"]), images=images, is_video=is_video,
                          frame_timing=timing, answer=answer,
                          group=None if is_missing(row.get("g_index")) else int(row["g_index"]))
        if row.get("mode") == "likelihood":
            if self.likelihood_target == "letter":
                request.options = [f"{letter}." for letter in present]
            else:
                request.options = [str(row[letter]) for letter in present]
            request.answer_position = present.index(answer) if answer in present else None
        if row.get("mode") == "generate-image":
            request.option_images = self._paths(row, "option_image_paths")
        return request

    def _media(self, row: dict[str, Any]) -> tuple[list[Image.Image], bool, FrameTiming | None]:
        """The row's pictures, whether they are a video's frames, and where those lie in the video when known."""
        if not is_missing(row.get("image")):
            return self._payload_images(row), False, None
        if not is_missing(row.get("image_path")):
            paths = self._paths(row, "image_path")
            return [self._load_file(path, "image_path") for path in paths], False, None
        if not is_missing(row.get("video_path")):
            frames, timing = self._video(row)
            return frames, True, timing
        return [], False, None

    def _payload_images(self, row: dict[str, Any]) -> list[Image.Image]:
        cell = str(row["image"])
        source = int(row["index"])
        if is_reference(cell):
            source, cell = self._referenced_payload(cell)
        cached = self._decoded.get(source)
        if cached is None:
            cached = self._decode_payloads(cell)
            self._decoded[source] = cached
            while len(self._decoded) > DECODED_CACHE_SIZE:
                self._decoded.popitem(last=False)
        return list(cached)

    def _decode_payloads(self, cell: str) -> list[Image.Image]:
        images = []
        for position, payload in enumerate(split_image_cell(cell)):
            try:
                images.append(load_image(decode_base64_image(payload), self.max_pixels))
            except ValueError as exc:
                which = f" (image {position + 1})" if position else ""
                raise RowError(f"column 'image'{which}: {exc}") from exc
        return images

    def _referenced_payload(self, reference: str) -> tuple[int, str]:
        number = reference_index(reference)
        target = None if number is None else self._position.get(number)
        if number is None or target is None or self._images is None:
            raise RowError(f"column 'image': refers to index {reference.strip()!r}, which is not in the prepared file")
        payload = self._images[target]
        if payload is None or is_reference(str(payload)):
            raise RowError(f"column 'image': refers to index {number}, whose image is not a payload "
                           "(references never chain)")
        return number, str(payload)

    def _paths(self, row: dict[str, Any], column: str) -> list[Path]:
        relative = media_paths(str(row[column]))
        if not relative:
            raise RowError(f"column '{column}': the list names no file (the row would run without its media)")
        try:
            return [resolve_media(self.media_root, rel, column=column) for rel in relative]
        except BadInputError as exc:
            raise RowError(f"column '{column}': {exc.reason}") from exc

    def _load_file(self, path: Path, column: str) -> Image.Image:
        try:
            return load_image(path.read_bytes(), self.max_pixels)
        except (OSError, ValueError) as exc:
            raise RowError(f"column '{column}': {path.name}: {exc}") from exc

    def _video(self, row: dict[str, Any]) -> tuple[list[Image.Image], FrameTiming | None]:
        cell = str(row["video_path"])
        paths = self._paths(row, "video_path")
        try:
            if cell.strip().startswith("["):
                return read_frame_files(paths, self.num_frames, self.max_pixels), None
            video = read_video_frames(paths[0], self._frame_request(row), self.max_pixels)
        except (OSError, ValueError) as exc:
            raise RowError(f"column 'video_path': {exc}") from exc
        # A file whose frame rate decord cannot tell (0, NaN) gives its frames no times rather than made-up ones.
        known_rate = math.isfinite(video.fps) and video.fps > 0
        return video.images, FrameTiming(tuple(video.indices), video.video_len, video.fps) if known_rate else None

    def _frame_request(self, row: dict[str, Any]) -> FrameRequest:
        dimension = row.get("question_type_id") if row.get("benchmark") == SEED_BENCHMARK else None
        return FrameRequest(num_frames=self.num_frames, dimension=None if dimension is None else int(dimension),
                            segment=_segment(row.get("segment")))


def _segment(cell: Any) -> tuple[float, float] | None:
    """The ``segment`` cell as (start, end), None when the row has none.

    Raises:
        ValueError: anything but two finite numbers (a file from elsewhere can hold ``[0, inf]`` or a null), so
            that the row fails instead of the whole run.
    """
    if cell is None:
        return None
    values = list(cell)
    if len(values) != 2 or not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
        raise ValueError(f"segment {values!r} is not [start, end] as two finite numbers")
    return float(values[0]), float(values[1])
