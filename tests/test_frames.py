"""SEED-Bench frame choice: every official test vector (docs/rules.md §7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mmbatch.benchmarks.seedbench.frames import (
    SegmentUnit,
    seed_frame_indices,
    segment_unit_for,
    uniform_frame_indices,
)


@pytest.fixture(scope="module")
def vectors(shared_data: Path) -> dict:
    return json.loads((shared_data / "seed" / "seed_frame_index_vectors.json").read_text())


def test_get_index_vectors(vectors: dict) -> None:
    table = vectors["get_index(num_frames,num_segments)"]
    assert len(table) >= 10
    for num_frames, by_k in table.items():
        for key, expected in by_k.items():
            k = int(key.removeprefix("k"))
            assert uniform_frame_indices(int(num_frames), k) == expected, (num_frames, k)


def test_dimension_10_uses_len_minus_one(vectors: dict) -> None:
    for name, expected in vectors["dim10_examples"].items():
        video_len = int(name.split("=")[1])
        assert seed_frame_indices(video_len, 30.0, dimension=10) == expected, name


def test_dimension_11_segments_in_seconds(vectors: dict) -> None:
    pattern = re.compile(r"segment=\[([\d.]+),([\d.]+)\],fps=([\d.]+),len=(\d+)")
    for name, expected in vectors["dim11_examples"].items():
        start, end, fps, video_len = pattern.fullmatch(name).groups()  # type: ignore[union-attr]
        got = seed_frame_indices(int(video_len), float(fps), dimension=11, segment=[float(start), float(end)])
        assert got == expected, name


def test_dimension_12_segments_in_frames(vectors: dict) -> None:
    pattern = re.compile(r"segment=\[(\d+),(\d+)\],len=(\d+)")
    for name, expected in vectors["dim12_examples"].items():
        start, end, video_len = pattern.fullmatch(name).groups()  # type: ignore[union-attr]
        got = seed_frame_indices(int(video_len), 15.0, dimension=12, segment=[int(start), int(end)])
        assert got == expected, name


def test_every_vector_group_is_covered(vectors: dict) -> None:
    assert set(vectors) - {"notes"} == {"get_index(num_frames,num_segments)", "dim10_examples", "dim11_examples",
                                        "dim12_examples"}


def test_other_videos_use_the_whole_video_and_num_segments() -> None:
    assert seed_frame_indices(100, 25.0) == uniform_frame_indices(100, 8)
    assert seed_frame_indices(100, 25.0, num_segments=4) == [12, 37, 62, 86]
    assert uniform_frame_indices(0, 8) == []
    assert segment_unit_for(12) is SegmentUnit.FRAMES and segment_unit_for(11) is SegmentUnit.SECONDS
