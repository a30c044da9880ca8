"""Cheap checks of the ``image`` column of an MMBench-style file.

A 4,000-row MMBench file holds ~400 MB of base64, so decoding every image would cost more than reading the file.
Instead: a vectorised pattern check proves each plain payload is valid base64, and only the first few KB of each
payload are decoded, enough for PIL to read the format and the size (the pixel limit is checked on the size).
Anything the fast path cannot vouch for (``data:`` prefixes, line-wrapped base64, list-strings of several images,
a header PIL cannot read from the prefix) gets the full check of :mod:`mmbatch.media`, and every error is confirmed
by the full check before it is reported. References must point at a row holding a payload.
"""

from __future__ import annotations

import base64
import binascii
import io
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from PIL import Image

from mmbatch.errors import BadInputError
from mmbatch.media import (
    MAX_REFERENCE_LENGTH,
    check_image_bytes,
    decode_base64_image,
    split_image_cell,
)

HEADER_CHARS = 16_384
"""Base64 characters decoded for the header check (12 KB of image; a multiple of 4)."""

_PLAIN_BASE64 = r"^[A-Za-z0-9+/]*={0,2}$"


@dataclass(frozen=True)
class ImageColumnCheck:
    """Where an image check runs and what it allows."""

    source: Path
    """The input file, named in error messages."""
    max_pixels: int
    """Largest width x height accepted."""


def check_image_column(frame: pl.DataFrame, check: ImageColumnCheck,
                       advance: Callable[[int], None] = lambda n: None) -> None:
    """Check every payload and reference of ``frame["image"]``; ``advance(n)`` reports rows done.

    Raises:
        BadInputError: undecodable base64, not an image, over the pixel limit, or a dangling reference,
            naming the file, the row ``index`` and the column ``image``.
    """
    image = frame["image"]
    length = image.str.len_bytes()
    payload = length > MAX_REFERENCE_LENGTH
    plain = payload & image.str.contains(_PLAIN_BASE64) & (length % 4 == 0)
    indices = frame["index"]
    for row, header in zip(plain.arg_true().to_list(), image.filter(plain).str.slice(0, HEADER_CHARS).to_list(),
                           strict=True):
        if not _header_fits(header, check.max_pixels):
            _check_full_cell(image[row], indices[row], check)
        advance(1)
    for row in (payload & ~plain).arg_true().to_list():
        _check_full_cell(image[row], indices[row], check)
        advance(1)
    check_references(frame, check.source)


def _header_fits(header: str, max_pixels: int) -> bool:
    """Whether the first bytes of a payload are a readable image header within the pixel limit."""
    try:
        data = base64.b64decode(header[: len(header) - len(header) % 4], validate=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as opened:
                width, height = opened.size
    except (binascii.Error, ValueError, OSError, Image.DecompressionBombError, SyntaxError, EOFError):
        return False
    return width * height <= max_pixels


def _check_full_cell(cell: str, index: object, check: ImageColumnCheck) -> None:
    """The full check of one cell (every image of a list-string decoded and verified)."""
    for position, item in enumerate(split_image_cell(cell)):
        where = f"image {position + 1} of the list: " if cell.lstrip().startswith("[") else ""
        try:
            data = decode_base64_image(item)
        except ValueError as exc:
            raise BadInputError(f"{where}{exc}", path=check.source, index=index, column="image") from None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                check_image_bytes(data, check.max_pixels)
        except Image.DecompressionBombError as exc:
            raise BadInputError(f"{where}image is over the pixel limit ({exc})", path=check.source, index=index,
                                column="image") from None
        except ValueError as exc:
            hint = " (raise it with --max-pixels)" if "over the limit" in str(exc) else ""
            raise BadInputError(f"{where}{exc}{hint}", path=check.source, index=index, column="image") from None


def reference_targets(image: pl.Series) -> pl.Series:
    """The ``index`` each short ``image`` cell refers to (null for payloads, empty cells and non-numbers)."""
    short = image.str.len_bytes() <= MAX_REFERENCE_LENGTH
    text = image.str.strip_chars().str.replace(r"\.0+$", "")
    return pl.select(pl.when(short).then(text.cast(pl.Int64, strict=False)).otherwise(None)).to_series()


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
