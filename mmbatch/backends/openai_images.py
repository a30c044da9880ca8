"""``generate-image`` rows through an OpenAI-compatible images API (``--backend openai``).

A row without input pictures (dimensions 25 and 27) is sent to ``POST /images/generations`` with its prompt; a row
with input pictures (dimension 26: the preceding frames) to ``POST /images/edits`` with the pictures as PNG files
and the prompt, which is how the images API takes pictures in. One picture per row (``n = 1``), asked for as
``b64_json``; ``--image-size WxH`` is passed as ``size``.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Awaitable, Callable
from typing import Any

from PIL import Image

from mmbatch.backends.base import Request

Send = Callable[[Any], Awaitable[bytes]]


def image_sender(request: Request, *, model: str, size: str | None) -> Send:
    """The call that asks the server for ``request``'s picture, for :meth:`ChatClient.fetch`."""
    fields: dict[str, Any] = {"model": model, "prompt": request.prompt, "n": 1, "response_format": "b64_json"}
    if size is not None:
        fields["size"] = size
    if not request.images:
        async def generate(client: Any) -> bytes:
            return bytes(await client.post("/images/generations", body=fields, cast_to=bytes))
        return generate
    files = [("image[]", (f"input-{position}.png", png_bytes(picture), "image/png"))
             for position, picture in enumerate(request.images)]

    async def edit(client: Any) -> bytes:
        # multipart/form-data, as the images API's edit endpoint requires
        return bytes(await client.post("/images/edits", body={k: str(v) for k, v in fields.items()}, files=files,
                                       cast_to=bytes, options={"headers": {"Content-Type": "multipart/form-data"}}))
    return edit


def decode_picture(content: bytes) -> Image.Image:
    """The first picture of an images API reply.

    Raises:
        ValueError: the reply is not JSON with ``data[0].b64_json`` holding a picture.
    """
    try:
        payload = json.loads(content)["data"][0]["b64_json"]
        with Image.open(io.BytesIO(base64.b64decode(payload, validate=True))) as picture:
            return picture.convert("RGB")
    except (ValueError, KeyError, IndexError, TypeError, OSError) as exc:
        snippet = content[:80].decode("utf-8", "replace")
        raise ValueError(f"not an images API reply with b64_json ({type(exc).__name__}): {snippet!r}") from exc


def png_bytes(picture: Image.Image) -> bytes:
    """``picture`` as PNG bytes (lossless: the server sees the exact pixels)."""
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()
