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
