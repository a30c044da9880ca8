"""Images and videos a row points at: base64 payloads, references and files under ``--media-root``.

Everything a model will see is checked here before it is used: base64 that does not decode, bytes that are not an
image, images over the pixel limit (decompression bombs), paths that escape the media root, missing files.
"""

from __future__ import annotations

import ast
import base64
import binascii
import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from mmbatch.errors import BadInputError
from mmbatch.formats.image_header import png_chunks_intact
from mmbatch.json_text import parse_json

if TYPE_CHECKING:  # PIL is imported where an image is opened: the CLI's parser imports this module for a constant
    from PIL import Image

DEFAULT_MAX_PIXELS = 64_000_000
"""Largest image (width x height) accepted by default; larger files are refused as likely decompression bombs."""
MAX_IMAGE_PAYLOAD_CHARS = 64 << 20
"""Longest base64 image payload decoded (48 MiB of picture file; a 1 GB cell took 7.5 GB before it was refused)."""

MAX_REFERENCE_LENGTH = 64
"""An ``image`` cell this short is a reference to another row's ``index`` (docs/rules.md §1)."""

REFERENCE_PATTERN = r"^\s*([+-]?[0-9]+)(?:\.0+)?\s*$"
"""An ``image`` cell that refers to another row: its ``index`` as an integer, written as pandas and xlsx may write
one (``12``, ``12.0``, `` 12 ``). The one rule for ``prepare`` (polars, :func:`reference_index` vectorised) and
``infer``: a cell one accepts the other resolves."""


def reference_index(cell: str) -> int | None:
    """The ``index`` a short ``image`` cell refers to, or None when it is not written as an integer."""
    found = re.match(REFERENCE_PATTERN, cell)
    return int(found.group(1)) if found else None


def is_reference(cell: str) -> bool:
    """Whether an ``image`` cell is a reference to another row rather than a payload."""
    return len(cell) <= MAX_REFERENCE_LENGTH


def split_image_cell(cell: str) -> list[str]:
    """The base64 payloads of an ``image`` cell: one, or several written as a Python/JSON list string."""
    text = cell.strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            items = ast.literal_eval(text)  # a literal parser, never eval
        except (ValueError, SyntaxError):
            return [cell]
        if isinstance(items, list) and all(isinstance(item, str) for item in items):
            return items
    return [cell]


def decode_base64_image(payload: str) -> bytes:
    """The bytes of a base64 payload (``data:`` URL prefixes allowed).

    Raises:
        ValueError: the text is not valid base64, or longer than :data:`MAX_IMAGE_PAYLOAD_CHARS`.
    """
    if len(payload) > MAX_IMAGE_PAYLOAD_CHARS:
        raise ValueError(f"the base64 payload holds {len(payload):,} characters, over the limit of "
                         f"{MAX_IMAGE_PAYLOAD_CHARS:,} (MAX_IMAGE_PAYLOAD_CHARS)")
    if payload.startswith("data:") and "," in payload:
        payload = payload.split(",", 1)[1]
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        # Some producers wrap base64 in lines; accept whitespace, nothing else.
        try:
            return base64.b64decode("".join(payload.split()), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"undecodable base64 ({exc})") from exc


_BUFFER_REPR = re.compile(r"\s*<_io\.\w+ object at 0x[0-9a-fA-F]+>")
"""How PIL names the in-memory file it was given (``cannot identify image file <_io.BytesIO object at 0x...>``)."""


def image_error_text(exc: BaseException) -> str:
    """PIL's error as a message for a person: its type and text, without the address of an in-memory buffer."""
    text = _BUFFER_REPR.sub("", str(exc)).strip()
    if text == "cannot identify image file":
        text = "the bytes are not a picture format PIL can read"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def check_image_bytes(data: bytes, max_pixels: int = DEFAULT_MAX_PIXELS) -> tuple[int, int]:
    """Verify that ``data`` is a complete image within the pixel limit; return its (width, height).

    Raises:
        ValueError: corrupt or truncated image, or more than ``max_pixels`` pixels.
    """
    with _open_within_limit(data, max_pixels) as image:
        width, height = image.size
        _verify(image)
    return width, height


def load_image(data: bytes, max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """Decode image bytes into an RGB PIL image (after the same checks as :func:`check_image_bytes`).

    One opening serves the check and the decoding when PIL's ``verify`` would find nothing more: for every format
    but PNG it checks nothing, and a PNG's chunk checksums (what it checks) are compared here at C speed. Otherwise
    the image is verified and opened again, as ``verify`` leaves it unusable. Opening twice cost infer's media
    thread ~40 % of its time per picture.

    Raises:
        ValueError: corrupt, truncated (caught only here: ``verify`` does not decode JPEG data) or oversized image.
    """
    with _open_within_limit(data, max_pixels) as image:
        if not _verify_checks_more(image, data):
            return _decoded_rgb(image)
        _verify(image)
    with _open_within_limit(data, max_pixels) as image:
        return _decoded_rgb(image)


def _open_within_limit(data: bytes, max_pixels: int) -> Image.Image:
    """``data`` opened by PIL (its header read, no pixel decoded); refused when over ``max_pixels``.

    Raises:
        ValueError: not an image PIL can open (PIL's own ``ValueError`` as it is), or over the limit.
    """
    from PIL import Image

    with _broken_file_as_value_error():
        image = Image.open(io.BytesIO(data))
    width, height = image.size
    if width * height > max_pixels:
        image.close()
        raise ValueError(f"image of {width}x{height} pixels is over the limit of {max_pixels} pixels")
    return image


def _verify(image: Image.Image) -> None:
    """PIL's ``verify`` of a just-opened image (checksums, for a PNG), its errors as ``ValueError``."""
    with _broken_file_as_value_error():
        image.verify()


@contextmanager
def _broken_file_as_value_error() -> Iterator[None]:
    """PIL's many error types for a broken file as one ``ValueError`` naming the problem (its own as they are)."""
    try:
        yield
    except ValueError:
        raise
    except Exception as exc:  # PIL raises many types for broken files
        raise ValueError(f"not a readable image ({image_error_text(exc)})") from exc


def _verify_checks_more(image: Image.Image, data: bytes) -> bool:
    """Whether PIL's ``verify`` could refuse ``image`` (opened from ``data``) although it opened.

    False when its format keeps ``ImageFile.verify``, which only closes the file, and for a PNG whose every chunk
    has a valid type and the checksum it declares, up to an ``IEND`` ending the data: the walk PNG's ``verify``
    makes from the first image chunk. Anything else (another format with a ``verify`` of its own, bytes after
    ``IEND``) is left to ``verify`` itself.
    """
    from PIL import ImageFile

    if type(image).verify is ImageFile.ImageFile.verify:
        return False
    return not (image.format == "PNG" and png_chunks_intact(data))


def _decoded_rgb(image: Image.Image) -> Image.Image:
    """The pixels of an opened image as RGB, a decoding error as ``ValueError``."""
    try:
        return image.convert("RGB")
    except OSError as exc:
        raise ValueError(f"not a readable image ({image_error_text(exc)})") from exc


def media_paths(cell: str) -> list[str]:
    """The relative paths in an ``image_path``/``video_path`` cell: one path or a JSON list of paths."""
    text = cell.strip()
    if text.startswith("["):
        try:
            items = parse_json(text)
        except ValueError:
            return [cell]
        if isinstance(items, list):
            return [str(item) for item in items]
    return [cell]


def resolve_media(root: str | Path, relative: str, *, source: str | Path | None = None,
                  index: object | None = None, column: str | None = None) -> Path:
    """The absolute path of ``relative`` under ``root``; it must stay inside ``root`` and exist.

    Raises:
        BadInputError: the path escapes the root (``../``, absolute paths, symlinks out) or is missing.
    """
    if "\x00" in relative:  # the OS cannot open such a name; Path.resolve would raise a ValueError
        raise BadInputError(f"media path {relative!r} holds a NUL byte", path=source, index=index, column=column)
    base = Path(root).resolve()
    candidate = (base / relative).resolve()
    if Path(relative).is_absolute() or not candidate.is_relative_to(base):
        raise BadInputError(f"media path {relative!r} escapes --media-root {str(root)!r}",
                            path=source, index=index, column=column)
    if not candidate.is_file():
        raise BadInputError(f"media file {relative!r} not found under --media-root {str(root)!r}",
                            path=source, index=index, column=column)
    return candidate
