"""Write ``examples/seed/``: tiny SEED-Bench-1 and -2 question files with drawn images and generated videos.

- ``seed_example.json`` (SEED-Bench-1 layout): 20 image questions over five dimensions (3 Instance Attributes,
  4 Instance Location, 5 Instances Counting, 6 Spatial Relation, 9 Text Understanding; image ids without an
  extension, as in the real file) and 3 video questions: dimension 10 (whole video), 11 (``segment`` in seconds)
  and 12 (``segment`` in frames), on 64x64 mp4 clips of a moving red square.
- ``seed2_example.json`` (SEED-Bench-2 layout): single image, two images, 8 video frames, an interleaved
  ``<img>`` question and a four-candidate image question, with ``level``/``subpart``/``data_source``/``version``.
- ``media/``: the images, the videos and the frames; every ``data_id`` is relative to it (``--media-root``).

Everything is drawn, so every answer is true; the output is byte-for-byte the same on every run.
Usage: ``python examples/generate/seed.py [OUT_DIR]`` (default ``examples/``; writes ``OUT_DIR/seed/``).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drawing import COLOURS, Shape, picture, word_picture

SIZE = 96
VIDEO_SIZE = 64
FPS = 8
SQUARE = 12
COLOURS_ASKED = ("red", "green", "blue", "yellow")
SHAPES = ("circle", "square", "triangle")
CORNERS = {"top left": (8, 8), "top right": (56, 8), "bottom left": (8, 56), "bottom right": (56, 56)}
WORDS = ("CAT", "SEED", "BUS", "MAP")
SEED1_TYPES = {
    "Scene Understanding": 1, "Instance Identity": 2, "Instance Attributes": 3, "Instance Location": 4,
    "Instances Counting": 5, "Spatial Relation": 6, "Instance Interaction": 7, "Visual Reasoning": 8,
    "Text Understanding": 9, "Action Recognition": 10, "Action Prediction": 11, "Procedure Understanding": 12,
}
SEED2_TYPES = {
    "Instances Counting": 5, "Difference Spotting": 17, "Global Video Understanding": 19,
    "In-Context Captioning": 23, "Text-to-Image Generation": 25,
}


def options(answer: str, distractors: list[str], rng: random.Random) -> tuple[dict[str, str], str]:
    """Four choices in a seeded random order and the letter of ``answer``."""
    texts = [answer, *distractors[:3]]
    rng.shuffle(texts)
    letter = "ABCD"[texts.index(answer)]
    return {f"choice_{k}": v for k, v in zip("abcd", texts, strict=True)}, letter


def image_questions(media: Path, rng: random.Random) -> list[dict[str, Any]]:
    """20 image questions (4 per dimension) and their images, saved as ``media/seed_img_NN.png``."""
    items: list[tuple[Image.Image, int, str, str, list[str]]] = []
    for colour, shape in zip(COLOURS_ASKED, (*SHAPES, "circle"), strict=True):
        others = [c for c in COLOURS_ASKED if c != colour]
        items.append((picture([Shape(shape, colour, (24, 24, 72, 72))], SIZE), 3, f"What colour is the {shape}?",
                      colour, others))
    for corner, (x, y) in CORNERS.items():
        others = [c for c in CORNERS if c != corner]
        items.append((picture([Shape("circle", "red", (x, y, x + 32, y + 32))], SIZE), 4, "Where is the red circle?",
                      f"in the {corner}", [f"in the {c}" for c in others]))
    for n in (1, 2, 3, 4):
        boxes = [(6 + 22 * i, 38, 24 + 22 * i, 56) for i in range(n)]
        words = ["One", "Two", "Three", "Four", "Five"]
        squares = picture([Shape("square", "blue", b) for b in boxes], SIZE)
        items.append((squares, 5, "How many squares are in the image?", words[n - 1],
                      [w for w in words if w != words[n - 1]]))
    for left, right in (("circle", "square"), ("square", "triangle"), ("triangle", "circle"), ("square", "circle")):
        image = picture([Shape(left, "green", (8, 30, 40, 62)), Shape(right, "yellow", (56, 30, 88, 62))], SIZE)
        items.append((image, 6, f"What is to the left of the yellow {right}?", f"a green {left}",
                      [f"a green {s}" for s in SHAPES if s != left] + [f"a yellow {right}"]))
    for word in WORDS:
        items.append((word_picture(word, SIZE), 9, "What word is written in the image?", word,
                      [w for w in WORDS if w != word]))
    questions = []
    for number, (image, dimension, question, answer, distractors) in enumerate(items):
        data_id = f"seed_img_{number:02d}"
        image.save(media / f"{data_id}.png", optimize=True)
        choices, letter = options(answer, distractors, rng)
        questions.append({"answer": letter, **choices, "data_id": data_id, "data_type": "image",
                          "question": question, "question_id": str(1000 + number), "question_type_id": dimension})
    return questions


def square_path(moves: list[str], frames_per_move: int) -> list[tuple[int, int]]:
    """Top-left corners of the square, frame by frame, for a list of moves (``right``, ``down``, ``left``, ``up``)."""
    step = {"right": (1, 0), "left": (-1, 0), "down": (0, 1), "up": (0, -1)}
    x, y = 4, 4  # every clip starts at the top left; no path leaves the frame
    span = VIDEO_SIZE - SQUARE - 8
    points = []
    for move in moves:
        dx, dy = step[move]
        for _ in range(frames_per_move):
            points.append((x, y))
            x += dx * (span // frames_per_move)
            y += dy * (span // frames_per_move)
    return points


def write_video(path: Path, points: list[tuple[int, int]]) -> None:
    """An mp4 (H.264, ``FPS`` frames per second) of a red square at each point on white; deterministic bytes."""
    import av

    with av.open(str(path), "w", options={"fflags": "+bitexact"}) as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width = stream.height = VIDEO_SIZE
        stream.pix_fmt = "yuv420p"
        stream.codec_context.time_base = Fraction(1, FPS)
        stream.options = {"threads": "1", "crf": "30", "preset": "medium", "flags": "+bitexact"}
        for x, y in points:
            frame = np.full((VIDEO_SIZE, VIDEO_SIZE, 3), 255, dtype=np.uint8)
            frame[y:y + SQUARE, x:x + SQUARE] = COLOURS["red"]
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode(None))


def video_questions(media: Path) -> list[dict[str, Any]]:
    """Three clips and their questions: dimensions 10 (whole clip), 11 (seconds) and 12 (frames)."""
    write_video(media / "square_right.mp4", square_path(["right"], 24))
    write_video(media / "square_right_down.mp4", square_path(["right", "down"], 24))
    write_video(media / "square_right_down_left.mp4", square_path(["right", "down", "left"], 16))
    moves = ["moving the square to the right", "moving the square to the left", "moving the square down",
             "moving the square up"]
    sequences = ["move right, move down, move left", "move left, move down, move right",
                 "move right, move up, move left", "move down, move right, move up"]
    return [
        {"answer": "A", **dict(zip(("choice_a", "choice_b", "choice_c", "choice_d"), moves, strict=True)),
         "data_id": "square_right.mp4", "data_type": "video",
         "question": "What is the action being carried out in the video?", "question_id": "v100",
         "question_type_id": 10},
        {"answer": "C", **dict(zip(("choice_a", "choice_b", "choice_c", "choice_d"), moves, strict=True)),
         "data_id": "square_right_down.mp4", "data_type": "video",
         "question": "Please anticipate what action will occur following the end of this video.",
         "question_id": "v101", "question_type_id": 11, "segment": [0.0, 3.0]},
        {"answer": "A", **dict(zip(("choice_a", "choice_b", "choice_c", "choice_d"), sequences, strict=True)),
         "data_id": "square_right_down_left.mp4", "data_type": "video",
         "question": "Can you identify the sequence of actions in this video and list them in order?",
         "question_id": "v102", "question_type_id": 12, "segment": [0, 48]},
    ]


def seed2_questions(media: Path, seed1: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Five SEED-Bench-2 style questions reusing the SEED-1 images, plus 8 frame images of a clip."""
    frames = media / "frames" / "square_right"
    frames.mkdir(parents=True)
    paths = square_path(["right"], 24)
    for i in range(8):
        x, y = paths[i * 3]
        image = Image.new("RGB", (VIDEO_SIZE, VIDEO_SIZE), "white")
        ImageDraw.Draw(image).rectangle((x, y, x + SQUARE - 1, y + SQUARE - 1), fill=COLOURS["red"])
        image.save(frames / f"{i + 1}.png", optimize=True)
    counting = next(q for q in seed1 if q["question_type_id"] == 5)
    common = {"data_source": "SEED-Bench v2", "version": "v2"}
    return [
        {**{k: counting[k] for k in ("answer", "choice_a", "choice_b", "choice_c", "choice_d", "data_id",
                                     "question")},
         "data_source": "cc3m", "data_type": "Single Image", "level": "L1", "question_id": "5_0",
         "question_type_id": 5, "subpart": "Single-Image & Text Comprehension", "version": "v1"},
        {"answer": "B", "choice_a": "The two images are the same.",
         "choice_b": "The square on the left becomes a circle on the right.",
         "choice_c": "The circle on the left becomes a square on the right.",
         "choice_d": "The right image has two squares.", "data_id": ["seed_img_08.png", "seed_img_00.png"],
         "data_type": "Multiple Images", "level": "L1", "question": "What are the differences between the two images?",
         "question_id": "17_0", "question_type_id": 17, "subpart": "Multiple-Images & Text Comprehension", **common},
        {"answer": "D", "choice_a": "A blue circle grows.", "choice_b": "A red square moves down.",
         "choice_c": "A red square moves to the left.", "choice_d": "A red square moves to the right.",
         "data_id": [f"frames/square_right/{i}.png" for i in range(1, 9)], "data_type": "Video", "level": "L1",
         "question": "What happens in the video?", "question_id": "19_0", "question_type_id": 19,
         "subpart": "Video & Text Comprehension", **common},
        {"answer": "C", "choice_a": "There is a red square.", "choice_b": "There is a blue circle.",
         "choice_c": "There is a blue triangle.", "choice_d": "There is a yellow circle.",
         "data_id": ["seed_img_00.png", "seed_img_03.png", "seed_img_02.png"], "data_type": "Interleaved Image",
         "level": "L2", "question": "<img>: There is a red circle. <img>: There is a yellow circle. <img>:",
         "question_id": "23_0", "question_type_id": 23, "subpart": "Interleaved Image & Text Comprehension",
         **common},
        {"answer": "B", "choice_a": "1.png", "choice_b": "2.png", "choice_c": "3.png", "choice_d": "4.png",
         "data_id": ["seed_img_00.png", "seed_img_01.png", "seed_img_02.png", "seed_img_03.png"],
         "data_type": "Image Generation", "level": "L3",
         "question": "Which picture below better fits the description: A green square.", "question_id": "25_0",
         "question_type_id": 25, "subpart": "Image Generation", **common},
    ]


CHOICE_KEYS = ("choice_a", "choice_b", "choice_c", "choice_d")
LEVEL3_TYPES = {"Text-to-Image Generation": 25, "Next Image Prediction": 26, "Text-Image Creation": 27}


def level3_questions() -> list[dict[str, Any]]:
    """One SEED-Bench-2 level-3 question of each dimension (25-27) over the drawn pictures, for the demo's
    image-generation run: options are pictures (25, 26) or texts with pictures (27); ``data_id`` lists the
    question's pictures, then the option pictures, as SEED-Bench-2's file does."""
    common = {"data_source": "SEED-Bench v2", "level": "L3", "version": "v2"}
    pictures = [f"seed_img_{number:02d}.png" for number in range(15)]
    questions = [
        {"answer": "B", **dict(zip(CHOICE_KEYS, ("1.png", "2.png", "3.png", "4.png"), strict=True)),
         "data_id": pictures[0:4], "data_type": "Image Generation",
         "question": "Which picture below better fits the description: A green square.", "question_id": "25_0",
         "question_type_id": 25, "subpart": "Image Generation", **common},
        {"answer": "C", **dict(zip(CHOICE_KEYS, pictures[7:11], strict=True)), "data_id": pictures[4:11],
         "data_type": "Image Generation", "question": "What will happen next?", "question_id": "26_0",
         "question_type_id": 26, "subpart": "Image Generation", **common},
        {"answer": "A", **dict(zip(CHOICE_KEYS, ("A red square on a white background, centred, with sharp edges.",
                                                 "A blue circle on a black background.",
                                                 "A yellow triangle in the corner.",
                                                 "Two green stripes across the picture."), strict=True)),
         "data_id": pictures[11:15], "data_type": "Image & Text Generation",
         "question": "What does a red square look like?", "question_id": "27_0", "question_type_id": 27,
         "subpart": "Image & Text Generation", **common},
    ]
    return [dict(sorted(question.items())) for question in questions]  # keys in the order of the committed file


def generate(out_dir: Path) -> Path:
    """Write ``out_dir/seed/`` from scratch and return it."""
    root = out_dir / "seed"
    if root.exists():
        shutil.rmtree(root)
    media = root / "media"
    media.mkdir(parents=True)
    rng = random.Random(20240601)
    seed1 = image_questions(media, rng) + video_questions(media)
    write_json(root / "seed_example.json", {"questions": seed1, "question_type": SEED1_TYPES})
    write_json(root / "seed2_example.json", {"questions": seed2_questions(media, seed1),
                                             "question_type": SEED2_TYPES})
    write_json(root / "seed2_level3_example.json", {"questions": level3_questions(), "question_type": LEVEL3_TYPES})
    return root


def write_json(path: Path, data: object) -> None:
    """Pretty JSON with a final newline (stable bytes)."""
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8", newline="\n")


def main(argv: list[str] | None = None) -> int:
    """Command line: ``seed.py [OUT_DIR]``."""
    args = sys.argv[1:] if argv is None else argv
    out_dir = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    print(f"wrote {generate(out_dir)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
