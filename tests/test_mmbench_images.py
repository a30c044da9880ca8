"""The cheap image checks: the fast path accepts good JPEG/PNG payloads without decoding, and nothing bad passes."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from mmbatch.benchmarks.mmbench.image_header import read_header
from mmbatch.benchmarks.mmbench.images import ImageColumnCheck, check_cell_fully, plain_payload_fits
from mmbatch.errors import BadInputError

LIMIT = 10_000_000


def encoded(size: tuple[int, int], image_format: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 40, 40)).save(buffer, image_format, **options)
    return buffer.getvalue()


def b64(data: bytes) -> bytes:
    return base64.b64encode(data)


@pytest.mark.parametrize(("image_format", "options"), [
    ("PNG", {}),
    ("JPEG", {"quality": 90}),
    ("JPEG", {"progressive": True}),
    ("JPEG", {"exif": b"Exif\x00\x00" + bytes(30_000)}),  # the size comes after 30 KB of EXIF: second, longer try
])
@pytest.mark.parametrize("size", [(5, 5), (64, 48), (301, 17)])
def test_fast_path_reads_the_size_and_accepts_complete_images(image_format: str, options: dict[str, object],
                                                              size: tuple[int, int]) -> None:
    data = encoded(size, image_format, **options)
    header = read_header(data)
    assert header is not None and (header.format, header.width, header.height) == (image_format, *size)
    assert plain_payload_fits(b64(data), LIMIT)


def test_fast_path_refuses_what_it_cannot_vouch_for() -> None:
    good = b64(encoded((64, 48), "PNG"))
    assert not plain_payload_fits(good[:40] + b"@" + good[41:], LIMIT)  # a byte outside the alphabet
    assert not plain_payload_fits(good[:40] + b"=" + good[41:], LIMIT)  # padding in the middle
    assert not plain_payload_fits(good[:40] + "é".encode() + good[42:], LIMIT)  # not ASCII
    assert not plain_payload_fits(good[:-4], LIMIT)  # truncated: no PNG end marker
    assert not plain_payload_fits(good[:-1], LIMIT)  # not a multiple of 4
    assert not plain_payload_fits(b64(encoded((64, 48), "JPEG"))[:-8], LIMIT)  # truncated JPEG
    assert not plain_payload_fits(b64(encoded((64, 48), "GIF")), LIMIT)  # other formats: full check
    assert not plain_payload_fits(good, 64 * 48 - 1)  # over the pixel limit


def test_full_check_accepts_what_the_fast_path_passes_on_and_names_the_problem() -> None:
    check = ImageColumnCheck(source=Path("x.tsv"), max_pixels=LIMIT)
    check_cell_fully(b64(encoded((8, 8), "GIF")).decode(), 1, check)
    check_cell_fully("data:image/png;base64," + b64(encoded((8, 8), "PNG")).decode(), 1, check)
    wrapped = b64(encoded((8, 8), "PNG")).decode()
    check_cell_fully("\n".join(wrapped[i:i + 76] for i in range(0, len(wrapped), 76)), 1, check)
    truncated = b64(encoded((64, 64), "JPEG")[:-200]).decode()
    with pytest.raises(BadInputError, match="row index=7: column 'image'"):
        check_cell_fully(truncated, 7, check)
    with pytest.raises(BadInputError, match="over the limit"):
        check_cell_fully(b64(encoded((64, 48), "PNG")).decode(), 7, ImageColumnCheck(Path("x.tsv"), 100))
