"""Cheap checks of the ``image`` column of a VLMEvalKit-format (MMBench-style) file.

A 4,000-row MMBench file holds ~400 MB of base64, so decoding every image would cost more than reading the file.
The fast path proves each payload is plain base64 with byte-table operations (no decoding), decodes only its first
few KB, enough for PIL to read the format and the size (the pixel limit is checked on the size), and its last bytes,
which must be the format's end marker (JPEG ``FFD9``, PNG ``IEND``), so that truncated cells are caught; a PNG's
chunk checksums are checked too (decoding its base64, not its pixels), as PIL's ``verify`` checks them in the SEED
readers and in infer. Anything the
fast path cannot vouch for (other formats, ``data:`` prefixes, line-wrapped base64, list-strings of several images)
gets the full check: decode, verify, load. Every error is found by the full check, so the fast path never refuses a
good image. References must point at a row holding a payload.
"""

from __future__ import annotations

import binascii
import io
import string
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from PIL import Image

from mmbatch.errors import BadInputError
from mmbatch.formats.image_header import png_chunks_intact, read_header
from mmbatch.media import (
    MAX_REFERENCE_LENGTH,
    REFERENCE_PATTERN,
    check_image_bytes,
    decode_base64_image,
    image_error_text,
    split_image_cell,
)

HEADER_CHARS = (2_048, 65_536)
"""Base64 characters decoded to find the size: 1.5 KB, then 48 KB when EXIF or ICC data comes first."""

BATCH_ROWS = 64
"""Payload cells fetched from the frame at a time (bounded memory: ~6 MB of 100 KB images; the checks run while
``prepare`` writes the file, so what they hold adds to the writer's memory)."""

_BASE64_ALPHABET = (string.ascii_letters + string.digits + "+/").encode()


@dataclass(frozen=True)
class ImageColumnCheck:
    """Where an image check runs and what it allows."""

    source: Path
    """The input file, named in error messages."""
    max_pixels: int
    """Largest width x height accepted."""


def check_image_column(frame: pl.DataFrame, check: ImageColumnCheck,
                       advance: Callable[[int], None] = lambda n: None) -> None:
    """Check every payload and reference of ``frame["image"]``; ``advance(n)`` reports payloads done.

    Raises:
        BadInputError: undecodable base64, not an image, a truncated image, over the pixel limit, or a dangling
            reference, naming the file, the row ``index`` and the column ``image``.
    """
    image = frame["image"]
    rows = (image.str.len_bytes() > MAX_REFERENCE_LENGTH).arg_true()
    indices = frame["index"]
    for start in range(0, len(rows), BATCH_ROWS):
        batch = rows.slice(start, BATCH_ROWS)
        # As bytes: the cast reinterprets polars' UTF-8 buffers, so each cell is copied once, not twice.
        for row, cell in zip(batch.to_list(), image.gather(batch).cast(pl.Binary).to_list(), strict=True):
            if not plain_payload_fits(cell, check.max_pixels):
                check_cell_fully(cell.decode("utf-8"), indices[row], check)
        advance(len(batch))
    check_references(frame, check.source)


def plain_payload_fits(data: bytes, max_pixels: int) -> bool:
    """Whether ``data`` (a cell's UTF-8 bytes) is one plain base64 JPEG or PNG, complete and within the pixel limit.

    Nothing is decoded but the first and last few bytes; any byte outside the base64 alphabet (non-ASCII included)
    sends the cell to the full check.
    """
    padding = len(data) - len(data.rstrip(b"="))
    if len(data) % 4 or padding > 2 or data.translate(None, _BASE64_ALPHABET) != b"=" * padding:
        return False
    try:
        header = None
        for chars in HEADER_CHARS:  # most headers fit the first; EXIF or ICC data can push the size further
            header = read_header(binascii.a2b_base64(data[:chars]))
            if header is not None or chars >= len(data):
                break
        tail = binascii.a2b_base64(data[-16:])  # >= 10 bytes: room for the 8-byte PNG end
    except binascii.Error:
        return False
    if header is None or not tail.endswith(header.end_marker) or header.width * header.height > max_pixels:
        return False
    # A PNG checksums its chunks (a JPEG has no checksum): checked here as every reader checks it, so that a PNG
    # damaged in transit is refused at prepare in MMBench files too, not only in SEED folders.
    return header.format != "PNG" or png_chunks_intact(binascii.a2b_base64(data))


def check_cell_fully(cell: str, index: object, check: ImageColumnCheck) -> None:
    """The full check of one cell: every image of a list-string decoded, verified and loaded.

    Raises:
        BadInputError: the first problem, naming the row and which image of a list it concerns.
    """
    images = split_image_cell(cell)
    for position, item in enumerate(images):
        where = f"image {position + 1} of {len(images)} in the list: " if len(images) > 1 else ""
        try:
            data = decode_base64_image(item)
        except ValueError as exc:
            raise BadInputError(f"{where}{exc}", path=check.source, index=index, column="image") from None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                check_image_bytes(data, check.max_pixels)
                with Image.open(io.BytesIO(data)) as opened:
                    opened.load()  # verify() does not notice a truncated JPEG; decoding does
        except Image.DecompressionBombError as exc:
            raise BadInputError(f"{where}image is over the pixel limit ({exc})", path=check.source, index=index,
                                column="image") from None
        except ValueError as exc:
            hint = " (raise it with --max-pixels)" if "over the limit" in str(exc) else ""
            raise BadInputError(f"{where}{exc}{hint}", path=check.source, index=index, column="image") from None
        except OSError as exc:
            raise BadInputError(f"{where}not a readable image ({image_error_text(exc)})", path=check.source,
                                index=index, column="image") from None


def reference_targets(image: pl.Series) -> pl.Series:
    """The ``index`` each short ``image`` cell refers to (null for payloads, empty cells and non-numbers)."""
    short = image.str.len_bytes() <= MAX_REFERENCE_LENGTH
    written = image.str.extract(REFERENCE_PATTERN, 1)  # the rule infer resolves references by (media.py)
    return pl.select(pl.when(short).then(written.cast(pl.Int64, strict=False)).otherwise(None)).to_series()


def check_references(frame: pl.DataFrame, source: Path) -> None:
    """Every reference must name the ``index`` of a row whose ``image`` is a payload.

    Raises:
        BadInputError: naming the first row whose reference is not a number, dangles, or points at a row
            without a payload.
    """
    image = frame["image"]
    short = image.is_not_null() & (image.str.len_bytes() <= MAX_REFERENCE_LENGTH)
    if not short.any():
        return
    targets = reference_targets(image)
    not_number = short & targets.is_null()
    if not_number.any():
        row = int(not_number.arg_max() or 0)
        raise BadInputError(f"image cell {image[row]!r} is neither base64 nor the index of another row",
                            path=source, index=frame["index"][row], column="image")
    with_payload = frame["index"].filter(image.str.len_bytes() > MAX_REFERENCE_LENGTH)
    dangling = short & ~targets.is_in(with_payload.implode())
    if dangling.any():
        row = int(dangling.arg_max() or 0)
        target = targets[row]
        exists = bool((frame["index"] == target).any())
        reason = "a row without an image payload" if exists else "no row (dangling reference)"
        raise BadInputError(f"image reference {image[row]!r} points at {reason}", path=source,
                            index=frame["index"][row], column="image")
