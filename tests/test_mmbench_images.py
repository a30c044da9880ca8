"""The cheap image checks: the fast path accepts good JPEG/PNG payloads without decoding their pixels, and nothing bad
passes."""

from __future__ import annotations

import base64
import io
import random
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from mmbatch.errors import BadInputError
from mmbatch.formats.image_header import read_header
from mmbatch.formats.images import ImageColumnCheck, check_cell_fully, payloads_that_fit, strict_base64

LIMIT = 10_000_000


def encoded(size: tuple[int, int], image_format: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 40, 40)).save(buffer, image_format, **options)
    return buffer.getvalue()


def b64(data: bytes) -> bytes:
    return base64.b64encode(data)


def plain_payload_fits(cell: bytes, max_pixels: int) -> bool:
    """The fast path's answer for one cell (its UTF-8 bytes), among cells of a batch that all fit."""
    good = b64(encoded((2, 2), "JPEG")).decode()
    answers = payloads_that_fit(pl.Series([good, cell.decode("utf-8"), good]), max_pixels)
    assert answers[0] and answers[2]
    return answers[1]


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
    # what the full check takes (its decoder strips whitespace; data: URLs), but the fast path leaves to it: line
    # breaks, spaces, the URL-safe alphabet, missing padding, padding past a full quantum (Python's decoder takes it)
    assert not plain_payload_fits(good[:76] + b"\n" + good[76:-4], LIMIT)
    assert not plain_payload_fits(good[:76] + b" " + good[76:-1], LIMIT)
    padded = payload_padded_with(2)
    assert not plain_payload_fits(padded.replace(b"+", b"-").replace(b"/", b"_"), LIMIT)
    assert not plain_payload_fits(padded.rstrip(b"="), LIMIT)
    quantum = payload_padded_with(0)
    assert base64.b64decode(quantum + b"=", validate=True) == base64.b64decode(quantum)
    assert plain_payload_fits(quantum, LIMIT) and not plain_payload_fits(quantum + b"=", LIMIT)


def test_stray_bits_after_the_last_byte_decode_as_infer_decodes_them() -> None:
    padded = payload_padded_with(2)
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet.index(padded[-3])  # its low 4 bits are padding: zero, unless set by someone else's encoder
    stray = padded[:-3] + alphabet[last | 1:(last | 1) + 1] + b"=="
    assert stray != padded
    assert strict_base64(stray.decode()) == base64.b64decode(stray, validate=True) == base64.b64decode(padded)
    assert plain_payload_fits(stray, LIMIT)


def test_the_fast_decoder_gives_infer_s_bytes_or_leaves_the_cell_to_the_full_check() -> None:
    """Where pybase64 decodes a cell, Python's ``b64decode(validate=True)`` (infer's decoder) gives the same bytes;
    it never takes a cell Python refuses. Cells of every length 0-40 and valid payloads with one character changed."""
    rng = random.Random(21)
    characters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=" + "-_ \n\t.\x00é"
    cells = ["".join(rng.choice(characters[:65] if rng.random() < 0.7 else characters)
                     for _ in range(length)) for length in range(41) for _ in range(300)]
    for _ in range(6_000):
        cell = base64.b64encode(rng.randbytes(rng.randrange(1, 60))).decode()
        at = rng.randrange(len(cell))
        cells.append(cell[:at] + rng.choice(characters) + cell[at + 1:])
    taken = 0
    for cell in cells:
        fast = strict_base64(cell)
        if fast is None:
            continue
        taken += 1
        assert fast == base64.b64decode(cell, validate=True), cell
    assert 2_000 < taken < len(cells) - 2_000  # both ways were tried


def payload_padded_with(padding: int) -> bytes:
    """A PNG's base64 ending in ``padding`` "=" and holding both "+" and "/"."""
    for side in range(8, 400):
        data = b64(encoded((side, 3), "PNG"))
        if len(data) - len(data.rstrip(b"=")) == padding and b"+" in data and b"/" in data:
            return data
    raise AssertionError("no such PNG among the sizes tried")


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


def png_with_a_bad_checksum() -> bytes:
    data = bytearray(encoded((64, 48), "PNG"))
    data[-20] ^= 0xFF  # a byte of the IDAT chunk's data: its CRC no longer matches; the end marker is intact
    return bytes(data)


def test_a_png_with_a_bad_checksum_is_refused_by_mmbench_prepare_as_by_seed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Campaign replay: such a PNG passed MMBench prepare (header and end marker fine) and failed in infer, while the
    # SEED reader refused it at prepare. One rule now: both refuse it, naming the row.
    from mmbatch.cli import main
    from tests.test_seed_read import image_record, write_seed

    bad = png_with_a_bad_checksum()
    assert not plain_payload_fits(b64(bad), LIMIT)
    tsv = tmp_path / "mcq.tsv"
    tsv.write_text("index\tquestion\tA\tB\tanswer\timage\n"
                   f"1\tWhat?\tcat\tdog\tA\t{b64(encoded((8, 8), 'PNG')).decode()}\n"
                   f"2\tWhat?\tcat\tdog\tA\t{b64(bad).decode()}\n", encoding="utf-8")
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(tsv), "--output",
                 str(tmp_path / "a.parquet")]) == 2
    assert "row index=2: column 'image'" in capsys.readouterr().err
    (tmp_path / "seed").mkdir()
    seed = write_seed(tmp_path / "seed", [image_record()])
    (seed.parent / "pic.png").write_bytes(bad)
    assert main(["prepare", "--benchmark", "seedbench", "--input", str(seed), "--output",
                 str(tmp_path / "b.parquet")]) == 2
    assert "row index=0: column 'image_path'" in capsys.readouterr().err


@pytest.mark.parametrize("reference", ["100", "100.0", " 100 ", "+100", "0100", "1e2", "100.5", "0x64"])
def test_an_image_reference_prepare_accepts_is_one_infer_resolves(tmp_path: Path, reference: str) -> None:
    # Campaign replay: '100.0' passed prepare (a pandas-written integer) and failed its row in infer, whose parser
    # took only digits. One rule now (media.REFERENCE_PATTERN): accepted by both, or refused at prepare.
    from mmbatch.cli import main
    from mmbatch.tableio import read_table

    tsv = tmp_path / "mcq.tsv"
    tsv.write_text("index\tquestion\tA\tB\tanswer\timage\n"
                   f"100\tWhat?\tcat\tdog\tA\t{b64(encoded((8, 6), 'PNG')).decode()}\n"
                   f"200\tAnd?\tcat\tdog\tB\t{reference}\n", encoding="utf-8")
    prepared = tmp_path / "prepared.parquet"
    accepted = main(["prepare", "--benchmark", "mmbench", "--input", str(tsv), "--output", str(prepared)]) == 0
    assert accepted == (reference not in ("1e2", "100.5", "0x64"))
    if accepted:
        output = tmp_path / "preds.parquet"
        assert main(["infer", "--input", str(prepared), "--output", str(output), "--backend", "echo", "--model",
                     "media"]) == 0
        assert read_table(output).frame["prediction"].to_list() == ["1 image 8x6"] * 2


@pytest.mark.parametrize("every", [0, 3, 64])  # payloads in consecutive rows, or references between them
@pytest.mark.parametrize("bad_at", [0, 70, 149])
def test_the_bad_payload_is_named_by_its_row_wherever_the_references_fall(every: int, bad_at: int) -> None:
    # The checks take payloads 64 at a time, as a view of the column where their rows are consecutive and as a copy
    # otherwise: either way the row named is the bad picture's own.
    from mmbatch.formats.images import check_image_column

    good = b64(encoded((4, 4), "JPEG")).decode()
    truncated = b64(encoded((4, 4), "JPEG")[:-40]).decode()
    cells = [str(1000) if every and i % every == every - 1 else good for i in range(150)]
    cells[bad_at] = truncated
    frame = pl.DataFrame({"index": [1000 + i for i in range(150)], "image": cells})
    check_image_column(frame.with_columns(pl.Series("image", [good if c == truncated else c for c in cells])),
                       ImageColumnCheck(source=Path("x.tsv"), max_pixels=LIMIT))
    with pytest.raises(BadInputError, match=f"row index={1000 + bad_at}: column 'image'"):
        check_image_column(frame, ImageColumnCheck(source=Path("x.tsv"), max_pixels=LIMIT))


def test_a_png_chunk_type_pil_does_not_read_is_left_to_the_full_check_which_refuses_it() -> None:
    # PIL stops at a chunk type that is not four letters, digits or underscores ("broken PNG file"), whatever its
    # checksum: the fast path must not vouch for such a PNG, or prepare would accept what infer then refuses.
    import zlib

    data = encoded((64, 48), "PNG")
    at = data.index(b"IDAT")
    length = int.from_bytes(data[at - 4:at], "big")
    body = b"ID T" + data[at + 4:at + 4 + length]
    renamed = data[:at] + body + zlib.crc32(body).to_bytes(4, "big") + data[at + 8 + length:]
    assert not plain_payload_fits(b64(renamed), LIMIT)
    with pytest.raises(BadInputError, match="not a readable image"):
        check_cell_fully(b64(renamed).decode(), 7, ImageColumnCheck(Path("x.tsv"), LIMIT))
