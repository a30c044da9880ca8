"""Deterministic drawings whose content is known, so that example questions have real answers.

Shapes in named colours at known places, a number of identical shapes, or a word in large letters; every function
returns a new RGB PIL image and draws the same pixels on every run.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30),
    "green": (30, 160, 60),
    "blue": (40, 70, 220),
    "yellow": (240, 200, 20),
    "black": (20, 20, 20),
}
"""Colour name -> RGB; the names are the answers of colour questions."""

SHAPES = ("circle", "square", "triangle", "star")
"""Shapes :func:`draw_shape` knows."""

BACKGROUND = (255, 255, 255)


@dataclass(frozen=True)
class Shape:
    """One filled shape in a picture."""

    kind: str
    """One of :data:`SHAPES`."""
    colour: str
    """A key of :data:`COLOURS`."""
    box: tuple[int, int, int, int]
    """Bounding box (left, top, right, bottom) in pixels."""


def draw_shape(draw: ImageDraw.ImageDraw, shape: Shape) -> None:
    """Draw one filled shape."""
    fill = COLOURS[shape.colour]
    x0, y0, x1, y1 = shape.box
    if shape.kind == "circle":
        draw.ellipse(shape.box, fill=fill)
    elif shape.kind == "square":
        draw.rectangle(shape.box, fill=fill)
    elif shape.kind == "triangle":
        draw.polygon([((x0 + x1) // 2, y0), (x1, y1), (x0, y1)], fill=fill)
    elif shape.kind == "star":
        cx, cy, r = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2
        points = []
        for i in range(10):
            radius = r if i % 2 == 0 else r * 0.45
            # 10 points alternating outer and inner radius, starting straight up
            angle_x, angle_y = _unit_vector(i * 36 - 90)
            points.append((cx + radius * angle_x, cy + radius * angle_y))
        draw.polygon(points, fill=fill)
    else:
        raise ValueError(f"unknown shape {shape.kind!r}; use one of {SHAPES}")


def _unit_vector(degrees: float) -> tuple[float, float]:
    import math

    return math.cos(math.radians(degrees)), math.sin(math.radians(degrees))


def picture(shapes: list[Shape], size: int = 96) -> Image.Image:
    """A white square picture with ``shapes`` drawn in order."""
    image = Image.new("RGB", (size, size), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for shape in shapes:
        draw_shape(draw, shape)
    return image


def count_picture(count: int, kind: str, colour: str, size: int = 96) -> Image.Image:
    """``count`` identical shapes (at most 9) on a 3x3 grid, filled row by row."""
    if not 0 <= count <= 9:
        raise ValueError("count_picture draws 0 to 9 shapes")
    cell = size // 3
    shapes = [Shape(kind, colour, ((i % 3) * cell + 4, (i // 3) * cell + 4, (i % 3 + 1) * cell - 4,
                                   (i // 3 + 1) * cell - 4)) for i in range(count)]
    return picture(shapes, size)


def word_picture(text: str, size: int = 96, colour: str = "black") -> Image.Image:
    """``text`` in large letters, centred on a white picture."""
    image = Image.new("RGB", (size, size), BACKGROUND)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=size // max(len(text), 3) + 6)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    position = ((size - (right - left)) / 2 - left, (size - (bottom - top)) / 2 - top)
    draw.text(position, text, fill=COLOURS[colour], font=font)
    return image


def image_bytes(image: Image.Image, image_format: str = "PNG") -> bytes:
    """The encoded bytes of ``image`` (``PNG`` or ``JPEG`` at quality 90), the same on every run."""
    buffer = io.BytesIO()
    options = {"quality": 90} if image_format == "JPEG" else {"optimize": False}
    image.save(buffer, image_format, **options)
    return buffer.getvalue()


def base64_image(image: Image.Image, image_format: str = "PNG") -> str:
    """``image`` encoded and written as base64 text, as the VLMEvalKit TSVs store images."""
    return base64.b64encode(image_bytes(image, image_format)).decode("ascii")
