"""Cheap checks of the ``image`` column of a VLMEvalKit-format (MMBench-style) file.

A 4,000-row MMBench file holds ~400 MB of base64, so decoding every picture's pixels would cost more than reading the
file. The fast path decodes each payload's base64 strictly (no pixels) with pybase64's vector decoder, and reads only
the first few KB of the bytes, enough to find the format and the size (the pixel limit is checked on the size), and the
last bytes, which must be the format's end marker (JPEG ``FFD9``, PNG ``IEND``), so that truncated cells are caught; a
PNG's chunk checksums are checked too, as PIL's ``verify`` checks them in the SEED readers and in infer. Anything the
fast path cannot vouch for (other formats, ``data:`` prefixes, line-wrapped base64, list-strings of several images) gets
the full check: decode, verify, load. Every error is found by the full check, so the fast path never refuses a good
image. References must point at a row holding a payload.
"""

from __future__ import annotations

import binascii
import io
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pybase64

from mmbatch.allocator import keep_freed_heap
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

HEADER_BYTES = (1_536, 49_152)
"""Bytes read to find the size: 1.5 KB, then 48 KB when EXIF or ICC data comes first."""

BATCH_ROWS = 64
"""Payload cells taken from the column at a time (bounded memory: ~5 MB of 100 KB images as Python strings; the checks
run while ``prepare`` writes the file, so what they hold adds to the writer's memory)."""


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
    keep_freed_heap()  # each batch's strings would otherwise be handed back to the system and faulted in again
    image = frame["image"]
    rows = (image.str.len_bytes() > MAX_REFERENCE_LENGTH).arg_true()
    indices = frame["index"]
    for start in range(0, len(rows), BATCH_ROWS):
        batch = rows.slice(start, BATCH_ROWS)
        first, last = batch[0], batch[-1]
        # Payloads in consecutive rows (the usual case) are a view of the column; others are copied together.
        cells = image.slice(first, len(batch)) if last - first == len(batch) - 1 else image.gather(batch)
        for row, fits in zip(batch.to_list(), payloads_that_fit(cells, check.max_pixels), strict=True):
            if not fits:
                check_cell_fully(image[row], indices[row], check)
        advance(len(batch))
    check_references(frame, check.source)


def payloads_that_fit(cells: pl.Series, max_pixels: int) -> list[bool]:
    """For each cell: whether it is one plain base64 JPEG or PNG, complete and within the pixel limit.

    Each cell is decoded strictly by pybase64 (SIMD: ~0.1 s for the 425 MB column of ``bench/bench_prepare.py``'s
    file, against 0.35-0.5 s for polars' decoder, which the checks used before): only the standard alphabet, with
    padding at the end alone, decodes. Where pybase64 decodes a cell, its bytes are those of Python's
    ``b64decode(validate=True)``, infer's decoder (``mmbatch.media.decode_base64_image``); the few cells Python takes
    and pybase64 does not (padding past a full quantum) are left to the full check, as are other formats, ``data:``
    prefixes and line-wrapped base64 (``tests/test_mmbench_images.py`` compares the two decoders). The header
    gives the format and size, the format's end marker catches truncated cells.
    """
    fits: list[bool] = []
    for cell in cells.to_list():
        data = strict_base64(cell)
        header = None if data is None else read_header(data[:HEADER_BYTES[0]])
        if header is None and data is not None and len(data) > HEADER_BYTES[0]:
            header = read_header(data[:HEADER_BYTES[1]])  # EXIF or ICC first
        fits.append(data is not None and header is not None and data.endswith(header.end_marker)
                    and header.width * header.height <= max_pixels
                    # A PNG checksums its chunks (a JPEG has no checksum): checked here as every reader checks it, so
                    # that a PNG damaged in transit is refused at prepare in MMBench files too, not only in SEED's.
                    and (header.format != "PNG" or png_chunks_intact(data)))
    return fits


def strict_base64(cell: str | None) -> bytes | None:
    """The bytes of ``cell`` when it is strict standard base64 (no whitespace, padding only at the end), else None."""
    if cell is None:
        return None
    try:
        return pybase64.b64decode(cell, validate=True)
    except (binascii.Error, ValueError):  # ValueError: a character outside ASCII
        return None


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
        from PIL import Image  # here: the full check is for the few cells the fast path leaves (~10 ms of start-up)

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
