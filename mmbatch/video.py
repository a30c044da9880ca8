"""Video frames for the model: decoded with decord, chosen by the SEED-Bench rule (docs/rules.md §7).

A ``video_path`` cell names either one video file, decoded here with decord's ``VideoReader``, or a JSON list of
frame image files (SEED-Bench-2 stores its videos as 8 frames), which are loaded as images. decord is imported only
when a video file is actually read, so stages without video never need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from mmbatch.benchmarks.seedbench.frames import seed_frame_indices, uniform_frame_indices
from mmbatch.media import DEFAULT_MAX_PIXELS, load_image


@dataclass(frozen=True)
class FrameRequest:
    """Which frames of a video a row wants."""

    num_frames: int = 8
    """Frames to sample (``--num-frames``)."""
    dimension: int | None = None
    """SEED-Bench-1 dimension (``question_type_id``), which decides how ``segment`` is read."""
    segment: tuple[float, float] | None = None
    """[start, end] of the part of the video to sample from, in seconds or frames by dimension."""


@dataclass(frozen=True)
class VideoFrames:
    """Frames decoded from a video, with what is needed to check them."""

    images: list[Image.Image]
    """The chosen frames, in time order, as RGB images."""
    indices: list[int]
    """Their frame numbers in the video."""
    video_len: int
    """Frames in the whole video."""
    fps: float
    """decord's average frame rate."""


def video_frame_size(path: str | Path) -> tuple[int, int] | None:
    """(width, height) of a video's frames as its container and stream headers declare them, read by PyAV without
    decoding the video; None when PyAV is not installed or the file declares none (a file PyAV cannot open is
    left to the decoder, which says what is wrong with it)."""
    try:
        import av
    except ImportError:
        return None
    try:
        with av.open(str(path)) as container:
            streams = container.streams.video
            context = streams[0].codec_context if streams else None
            return (int(context.width), int(context.height)) if context and context.width and context.height else None
    except Exception:  # PyAV raises its own errors (and OSError, ValueError) for files it cannot read
        return None


def check_video_pixels(path: str | Path, max_pixels: int) -> None:
    """Refuse a video whose frames are over ``max_pixels`` before any frame is decoded (a 12000x12000 video passed
    ``--max-pixels`` and its 8 frames took 4.4 GB).

    Raises:
        ValueError: naming the frame size and the limit.
    """
    size = video_frame_size(path)
    if size is not None and size[0] * size[1] > max_pixels:
        raise ValueError(f"video frames of {size[0]}x{size[1]} pixels are over the limit of {max_pixels} pixels "
                         "(--max-pixels)")


def read_video_frames(path: str | Path, request: FrameRequest, max_pixels: int = DEFAULT_MAX_PIXELS) -> VideoFrames:
    """Decode the frames ``request`` chooses from the video at ``path``, after checking their size.

    Raises:
        ValueError: the file is not a decodable video, its frames are over ``max_pixels``, or the rule leaves no
            frame to show.
    """
    check_video_pixels(path, max_pixels)
    try:
        from decord import VideoReader, cpu
    except ImportError as exc:  # decord is in the `infer` extra
        raise ValueError("reading videos needs decord: pip install 'mmbatch[infer]'") from exc
    try:
        reader = VideoReader(str(path), ctx=cpu(0), num_threads=1)
        video_len = len(reader)
        fps = float(reader.get_avg_fps())
    except Exception as exc:  # decord raises DECORDError and RuntimeError for broken files
        raise ValueError(f"not a readable video ({_first_line(exc)})") from exc
    indices = seed_frame_indices(video_len, fps, num_segments=request.num_frames, dimension=request.dimension,
                                 segment=request.segment)
    indices = [i for i in indices if 0 <= i < video_len]
    if not indices:
        raise ValueError(f"no frame to sample: video of {video_len} frames, segment {request.segment}")
    try:
        batch = reader.get_batch(indices).asnumpy()
    except Exception as exc:
        raise ValueError(f"could not decode frames {indices} ({_first_line(exc)})") from exc
    images = [Image.fromarray(frame).convert("RGB") for frame in batch]
    return VideoFrames(images, indices, video_len, fps)


def read_frame_files(paths: Sequence[Path], num_frames: int, max_pixels: int = DEFAULT_MAX_PIXELS
                     ) -> list[Image.Image]:
    """Load a video stored as frame images: all of them, or ``get_index`` samples when there are more files
    than ``num_frames`` (``get_index(8, 8)`` would repeat a frame and drop the last, so it is not applied to 8 files).

    Raises:
        ValueError: a frame is not a readable image, or there is none.
    """
    if not paths:
        raise ValueError("the video has no frame files")
    chosen = range(len(paths)) if len(paths) <= num_frames else uniform_frame_indices(len(paths), num_frames)
    return [load_image(paths[i].read_bytes(), max_pixels) for i in chosen]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__
