"""Which video frames a SEED-Bench question shows the model (docs/rules.md §7).

The official evaluation samples 8 frames with ``get_index``; what it is applied to depends on the dimension:

- dimension 10 (Action Recognition): the whole video, with the length taken as ``len(video) - 1``;
- dimension 11 (Action Prediction): the ``segment`` given in seconds, turned into frames with decord's average fps;
- dimension 12 (Procedure Understanding): the ``segment`` given in frames;
- any other video: the whole video (``get_index(len(video), k)``).

These functions compute indices only; :mod:`mmbatch.video` decodes the frames.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

ACTION_RECOGNITION = 10
ACTION_PREDICTION = 11
PROCEDURE_UNDERSTANDING = 12


class SegmentUnit(str, Enum):
    """How a ``segment`` [start, end] is measured."""

    SECONDS = "seconds"
    FRAMES = "frames"


def round_half_even(value: float) -> int:
    """``np.round`` for one number: halves go to the even neighbour, as Python's ``round`` does."""
    return round(value)


def uniform_frame_indices(num_frames: int, num_segments: int) -> list[int]:
    """The official SEED-Bench ``get_index(num_frames, num_segments)``.

    When there are fewer frames than segments every frame is taken (so fewer than ``num_segments``, possibly none);
    otherwise ``seg = (num_frames - 1) / num_segments`` and frame ``i`` is ``int(seg / 2) + round_half_even(seg * i)``.

    Args:
        num_frames: frames available (may be 0).
        num_segments: frames wanted.
    """
    if num_segments > num_frames:
        return list(range(max(num_frames, 0)))
    seg_size = float(num_frames - 1) / num_segments
    start = int(seg_size / 2)
    return [start + round_half_even(seg_size * i) for i in range(num_segments)]


def segment_unit_for(dimension: int | None) -> SegmentUnit:
    """The unit of ``segment`` for a SEED-Bench-1 dimension: frames for dimension 12, seconds otherwise."""
    return SegmentUnit.FRAMES if dimension == PROCEDURE_UNDERSTANDING else SegmentUnit.SECONDS


def seed_frame_indices(video_len: int, fps: float, *, num_segments: int = 8, dimension: int | None = None,
                       segment: Sequence[float] | None = None) -> list[int]:
    """The frames SEED-Bench shows for a video question.

    Args:
        video_len: number of frames in the video (decord's ``len(VideoReader)``).
        fps: decord's average frame rate; used only for segments in seconds.
        num_segments: frames wanted (``--num-frames``, 8 officially).
        dimension: the question's ``question_type_id``, when it is a SEED-Bench-1 question.
        segment: [start, end] in seconds (dimension 11 and others) or frames (dimension 12), or None.
    """
    if segment is not None and len(segment) == 2:
        if segment_unit_for(dimension) is SegmentUnit.FRAMES:
            start = int(segment[0])
            end = min(int(segment[1]), video_len)
        else:
            start = int(min(max(segment[0] * fps, 0), video_len - 1))
            end = int(min(max(segment[1] * fps, 0), video_len - 1))
        return [start + i for i in uniform_frame_indices(end - start, num_segments)]
    if dimension == ACTION_RECOGNITION:
        return uniform_frame_indices(video_len - 1, num_segments)
    return uniform_frame_indices(video_len, num_segments)
