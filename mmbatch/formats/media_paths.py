"""Checks of the ``image_path`` column of a VLMEvalKit-format file: files under the media root, within the limit."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.media import media_paths, resolve_media


def check_image_paths(frame: pl.DataFrame, media_root: Path, source: Path, max_pixels: int) -> None:
    """Every ``image_path`` names an image file inside ``media_root`` whose header PIL can read, within the limit.

    Raises:
        BadInputError: a path escaping the root, a missing file, an unreadable image or one over the pixel limit.
    """
    from PIL import Image  # here: a file of base64 payloads, prepare's usual input, has no image_path (~10 ms)

    for index, cell in frame.select("index", "image_path").filter(pl.col("image_path").is_not_null()).iter_rows():
        for relative in media_paths(cell):
            resolved = resolve_media(media_root, relative, source=source, index=index, column="image_path")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                    with Image.open(resolved) as opened:
                        width, height = opened.size
            except Image.DecompressionBombError as exc:
                raise BadInputError(f"{relative}: over the pixel limit ({exc})", path=source, index=index,
                                    column="image_path") from None
            except (OSError, SyntaxError, ValueError) as exc:
                raise BadInputError(f"{relative}: not a readable image ({exc})", path=source, index=index,
                                    column="image_path") from None
            if width * height > max_pixels:
                raise BadInputError(f"{relative}: image of {width}x{height} pixels is over the limit of "
                                    f"{max_pixels} pixels (raise it with --max-pixels)", path=source, index=index,
                                    column="image_path")
