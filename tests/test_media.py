"""Image payload checks shared by prepare and infer."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from mmbatch.media import check_image_bytes, decode_base64_image, is_reference, load_image, split_image_cell


def _jpeg(size: tuple[int, int] = (64, 48)) -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise(size, 64).convert("RGB").save(buffer, "JPEG")
    return buffer.getvalue()


def test_a_good_image_decodes_to_rgb() -> None:
    image = load_image(decode_base64_image(base64.b64encode(_jpeg()).decode()))
    assert image.mode == "RGB" and image.size == (64, 48)


def test_truncated_jpeg_passes_the_cheap_check_but_not_loading() -> None:
    data = _jpeg((256, 256))
    truncated = data[: len(data) * 2 // 3]
    check_image_bytes(truncated)  # the header is intact: only decoding finds the damage
    with pytest.raises(ValueError, match="not a readable image"):
        load_image(truncated)


def test_pixel_limit_and_garbage() -> None:
    with pytest.raises(ValueError, match="over the limit of 1000 pixels"):
        check_image_bytes(_jpeg((40, 40)), max_pixels=1000)
    with pytest.raises(ValueError, match="not a readable image"):
        check_image_bytes(b"not an image at all")
    with pytest.raises(ValueError, match="undecodable base64"):
        decode_base64_image("@@@not base64@@@")


def test_image_cells() -> None:
    assert is_reference("1000001") and not is_reference("x" * 65)
    assert split_image_cell("['abc', 'def']") == ["abc", "def"]
    assert split_image_cell("__import__('os')") == ["__import__('os')"]


def _png_with_text() -> bytes:
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("note", "a text chunk after the header")
    buffer = io.BytesIO()
    Image.effect_noise((12, 9), 64).convert("RGB").save(buffer, "PNG", pnginfo=info)
    return buffer.getvalue()


def _verified_then_loaded(data: bytes) -> Image.Image | None:
    """What load_image gave when it always verified first and opened the bytes again: None for a refusal."""
    try:
        check_image_bytes(data)
        with Image.open(io.BytesIO(data)) as image:
            return image.convert("RGB")
    except (ValueError, OSError):
        return None


def _damaged(data: bytes) -> list[bytes]:
    flips = [data[:at] + bytes([data[at] ^ bit]) + data[at + 1:] for at in range(len(data)) for bit in (0x01, 0x80)]
    cuts = [data[:length] for length in range(0, len(data), 3)]
    return [data, data + b"\x00trailing", *flips, *cuts]


@pytest.mark.parametrize("image_format", ["PNG", "JPEG"])
def test_one_opening_accepts_and_refuses_what_verifying_first_did(image_format: str) -> None:
    # load_image opens a picture once when PIL's verify would find nothing more (a JPEG; a PNG whose chunks carry
    # their checksums): every flipped bit, cut and trailing byte must give the same answer, pixels included.
    data = _png_with_text() if image_format == "PNG" else _jpeg((12, 9))
    variants = _damaged(data)
    refused = 0
    for variant in variants:
        expected = _verified_then_loaded(variant)
        try:
            got: Image.Image | None = load_image(variant)
        except ValueError:
            got = None
        assert (got is None) == (expected is None), variant
        if got is not None and expected is not None:
            assert got.tobytes() == expected.tobytes()
        refused += got is None
    assert 0 < refused < len(variants) - 1  # the variants exercise both answers


def test_a_chunk_type_pil_does_not_read_is_refused_though_its_checksum_holds() -> None:
    import zlib

    from mmbatch.formats.image_header import png_chunks_intact

    data = _png_with_text()
    at = data.index(b"tEXt")
    length = int.from_bytes(data[at - 4:at], "big")
    body = b"tE T" + data[at + 4:at + 4 + length]
    renamed = data[:at] + body + zlib.crc32(body).to_bytes(4, "big") + data[at + 8 + length:]
    assert png_chunks_intact(data) and not png_chunks_intact(renamed)
    with pytest.raises(ValueError, match="not a readable image"):
        load_image(renamed)
