"""MME and SEED example generators: deterministic, committed output current, videos decord can read."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.conftest import EXAMPLES

GENERATORS = EXAMPLES / "generate"
COMMITTED_LIMIT_BYTES = 2_000_000


def load_generator(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_generator_{name}", GENERATORS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["mme", "seed"])
def test_generator_is_deterministic(tmp_path: Path, name: str) -> None:
    generator = load_generator(name)
    first = digests(generator.generate(tmp_path / "a"))
    second = digests(generator.generate(tmp_path / "b"))
    assert first == second
    committed = digests(EXAMPLES / name)
    assert sorted(committed) == sorted(first), f"examples are stale: run examples/generate/{name}.py"
    # Text is the same on any machine; PNG/mp4 bytes may differ with other zlib/x264 builds.
    for relative, digest in committed.items():
        if relative.endswith((".txt", ".json")):
            assert digest == first[relative], f"{relative} is stale: run examples/generate/{name}.py"


def test_committed_examples_are_small() -> None:
    total = sum(p.stat().st_size for name in ("mme", "seed") for p in (EXAMPLES / name).rglob("*") if p.is_file())
    assert total < COMMITTED_LIMIT_BYTES


def red_square_corner(frame: np.ndarray) -> tuple[int, int]:
    ys, xs = np.where((frame[:, :, 0] > 150) & (frame[:, :, 1] < 110) & (frame[:, :, 2] < 110))
    return int(np.median(xs)), int(np.median(ys))


def test_videos_decode_with_decord_and_show_the_described_motion() -> None:
    decord = pytest.importorskip("decord")
    media = EXAMPLES / "seed" / "media"
    questions = {q["data_id"]: q for q in json.loads((EXAMPLES / "seed" / "seed_example.json").read_text())[
        "questions"] if q["data_type"] == "video"}
    assert set(questions) == {"square_right.mp4", "square_right_down.mp4", "square_right_down_left.mp4"}
    tracks = {}
    for name in questions:
        reader = decord.VideoReader(str(media / name))
        assert reader.get_avg_fps() == pytest.approx(8.0)
        tracks[name] = [red_square_corner(reader[i].asnumpy()) for i in range(len(reader))]
    right = tracks["square_right.mp4"]
    assert len(right) == 24 and right[-1][0] > right[0][0] + 15 and right[-1][1] == pytest.approx(right[0][1], abs=1)
    # Dimension 11: during the segment (0-3 s = frames 0-23) it moves right, afterwards down: answer C.
    right_down = tracks["square_right_down.mp4"]
    assert right_down[23][0] > right_down[0][0] + 15 and right_down[47][1] > right_down[24][1] + 15
    assert questions["square_right_down.mp4"]["segment"] == [0.0, 3.0]
    # Dimension 12: segment in frames over the whole clip: right, down, left.
    path = tracks["square_right_down_left.mp4"]
    assert path[15][0] > path[0][0] and path[31][1] > path[16][1] and path[47][0] < path[32][0]
    assert questions["square_right_down_left.mp4"]["segment"] == [0, 48]
