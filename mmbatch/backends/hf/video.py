"""How video rows reach the model: as one video, or as their sampled frames given as that many images.

The stage samples a video row's frames (the SEED-Bench rule, ``--num-frames``). ``--video-as frames`` gives them to
the model as images, in order: every image-text-to-text model takes that, and it is how image-only models such as
LLaVA-1.5 and Idefics3 were evaluated on video questions. ``--video-as video`` gives the same frames to the
processor's video input, as one video, so the model sees them as its authors fed videos: LLaVA-OneVision pools each
frame's features and ends the video with one newline embedding, Qwen2-VL merges frame pairs into temporal patches with
time positions, InternVL writes ``Frame1: <img>...`` per frame. Frames decoded from a video file go with their place
in the video (frame numbers, frame rate), which the processors that write timestamps or time positions read.

The default is the family's own: ``video`` where its authors evaluated videos through the video input
(:data:`AUTHORS_FEED_VIDEO`), ``frames`` elsewhere. ``docs/models.md`` lists the choice per family.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from PIL import Image

from mmbatch.backends.base import FrameTiming, Request
from mmbatch.errors import BadInputError

VIDEO_AS_CHOICES = ("video", "frames")
"""``--video-as`` values."""

AUTHORS_FEED_VIDEO = frozenset({
    "llava_onevision",  # LLaVA-OneVision: video benchmarks through its video path (pooled frames)
    "llava_next_video",  # LLaVA-NeXT-Video: pooled frame features, as LLaVA-OneVision
    "video_llava",  # Video-LLaVA: its video tower (8 frames as one video), a tower of its own beside the image one
    "internvl",  # InternVL 2.5 / 3: "Frame{i}: <image>" per sampled frame, which its video path writes
    "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe",  # Qwen-VL: video input
    "glm4v", "glm4v_moe",  # GLM-4.1V / 4.5V: video input with timestamps
    "smolvlm",  # SmolVLM2: video input with timestamps
    "gemma4",  # Gemma 4: video input with timestamps
    "minicpmv4_6", "minicpmv4_7",  # MiniCPM-V 4.6 / 4.7: frames through the video input, as <|video_pad|> tokens
})
"""``model_type`` of the families whose authors evaluated videos through the processor's video input; the others
default to frames as images."""

TIMED_VIDEO = frozenset({"qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe", "glm4v", "glm4v_moe",
                         "smolvlm", "gemma4"})
"""``model_type`` of the families whose processor reads where the frames lie in the video (timestamps written in the
prompt, or time positions from the frame rate). Without that, ``transformers`` assumes 24 frames per second."""


class FramesAsVideo(list[Image.Image]):
    """A video row's sampled frames, to be given to the processor as one video (``--video-as video``).

    It is the row's ``images`` list itself, marked: every step that passes a row's images along passes the video,
    and :func:`mmbatch.backends.hf.messages.chat_text` and :func:`~mmbatch.backends.hf.messages.encode` see it.
    """

    def __init__(self, frames: Iterable[Image.Image], timing: FrameTiming | None) -> None:
        """The frames in time order, and where they lie in the video when known."""
        super().__init__(frames)
        self.timing = timing
        """Frame numbers and frame rate of the frames in their video; None for frames listed as files."""

    def metadata(self) -> Any:
        """``transformers``' ``VideoMetadata`` for the processor: the frames' numbers and the video's frame rate when
        known; else what ``transformers`` assumes for frames given without metadata (numbered 0, 1.., no rate), which
        :func:`untimed_refusal` keeps from the families that read times."""
        from transformers.video_utils import VideoMetadata

        width, height = self[0].size if self else (None, None)
        if self.timing is None:
            return VideoMetadata(total_num_frames=len(self), frames_indices=list(range(len(self))), width=width,
                                 height=height)
        timing = self.timing
        return VideoMetadata(total_num_frames=timing.video_len, fps=timing.fps, width=width, height=height,
                             duration=timing.video_len / timing.fps, frames_indices=list(timing.indices))


def family_default(model: Any) -> str:
    """How the model's authors fed videos: ``video`` or ``frames`` (:data:`AUTHORS_FEED_VIDEO`)."""
    return "video" if model_type(model) in AUTHORS_FEED_VIDEO else "frames"


def model_type(model: Any) -> str:
    """The model's ``config.model_type`` (``qwen2_vl``), or an empty string."""
    return str(getattr(getattr(model, "config", None), "model_type", "") or "")


def resolve_video_as(requested: str | None, model: Any, processor: Any, model_name: str) -> str:
    """``--video-as`` for this model: the one asked for, else the family's default (``frames`` whenever the processor
    has no video input).

    Raises:
        BadInputError: an unknown value, or ``video`` asked for a model whose processor has no video input.
    """
    if requested is not None and requested not in VIDEO_AS_CHOICES:
        raise BadInputError(f"--video-as {requested!r}: choose one of {', '.join(VIDEO_AS_CHOICES)}")
    takes_video = getattr(processor, "video_processor", None) is not None
    if requested is None:
        return family_default(model) if takes_video else "frames"
    if requested == "video" and not takes_video:
        raise BadInputError(f"--video-as video: the processor of {model_name!r} ({type(processor).__name__}) takes "
                            "no video; run with --video-as frames (its frames given as images)")
    return requested


def as_model_input(requests: Sequence[Request], video_as: str) -> list[Request]:
    """The rows as the model gets them: with ``video``, a video row's frames become one :class:`FramesAsVideo`."""
    if video_as != "video":
        return list(requests)
    return [dataclasses.replace(request, images=FramesAsVideo(request.images, request.frame_timing))
            if request.is_video and request.images else request for request in requests]


def untimed_refusal(model: Any, request: Request) -> str | None:
    """Why the row cannot be given as a video, or None.

    A family whose processor reads the frames' times (:data:`TIMED_VIDEO`) would be given made-up times for frames
    listed as files (``transformers`` assumes 24 frames per second): a wrong input, so the row fails instead.
    """
    images = request.images
    if not isinstance(images, FramesAsVideo) or images.timing is not None or model_type(model) not in TIMED_VIDEO:
        return None
    return (f"--video-as video: {model_type(model)} reads where the frames lie in the video (timestamps or time "
            "positions), and frames listed as files carry no times; run with --video-as frames, or give the video "
            "file")


def stacked_frames_refusal(processor: Any, request: Request) -> str | None:
    """Why the row cannot be given as a video to this processor, or None.

    A video processor configured to stack frames (MiniCPM-V 4.6 / 4.7's ``stack_frames`` > 1) samples, besides one
    frame per second, sub-frames it pastes into one composite image per second, and with frames already sampled
    (``do_sample_frames=False``, as mmbatch gives them) it takes the last ones given for those sub-frames: the stage's
    evenly sampled frames would reach the model as composites they are not, a wrong input, so the row fails instead.
    """
    if not isinstance(request.images, FramesAsVideo):
        return None
    stack = getattr(getattr(processor, "video_processor", None), "stack_frames", None)
    if not isinstance(stack, int) or stack <= 1:
        return None
    return (f"--video-as video: the checkpoint's video processor stacks frames (stack_frames={stack}): it would paste "
            "the last of the sampled frames into composite images of sub-frames, which they are not; run with "
            "--video-as frames")


def describe(video_as: str) -> str:
    """The settings' words for how video rows were given."""
    if video_as == "video":
        return "one video (the sampled frames, with their frame numbers and rate when decoded from a video file)"
    return "frames as images"
