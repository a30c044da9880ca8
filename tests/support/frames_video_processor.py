"""A video processor that works without torchvision, for this test environment only: it lets a test give a family
a video through the processor's real video input.

The library's video processors all derive from ``BaseVideoProcessor``, which needs torchvision (it does not import
here); :mod:`tests.support.video_standin` fills the slot for image-only tests and refuses videos. This one does what
LLaVA-OneVision's, InternVL's and SmolVLM's video processors do with frames already sampled — each frame converted to
RGB, resized to ``size``, rescaled to [0, 1], normalised by ``image_mean``/``image_std`` — with PIL and numpy. It
returns ``pixel_values_videos`` (or the name in ``output_name``: SmolVLM's is ``pixel_values``) of shape (videos,
frames, channels, height, width), and the videos' metadata when the processor asks for it (for frame timestamps).
PIL's bicubic resize is not torchvision's to the last bit; the tests using it compare the backend with the model's
own ``apply_chat_template`` through the same processor, so that does not matter to them.

:func:`register` lets ``AutoProcessor.from_pretrained`` load a saved one, as
:func:`tests.support.video_standin.register` does for the stand-in.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from PIL import Image
from transformers import PretrainedConfig
from transformers.image_processing_utils import BatchFeature
from transformers.models.auto.video_processing_auto import AutoVideoProcessor
from transformers.video_processing_utils import VideoProcessorMixin
from transformers.video_utils import make_batched_metadata, make_batched_videos


class FramesVideoProcessor(VideoProcessorMixin):
    """Resizes and normalises every frame of each video; samples no frames (they come sampled)."""

    resample = Image.Resampling.BICUBIC
    image_mean = (0.48145466, 0.4578275, 0.40821073)
    image_std = (0.26862954, 0.26130258, 0.27577711)
    size: ClassVar[dict[str, int]] = {"height": 384, "width": 384}
    do_resize = True
    do_rescale = True
    do_normalize = True
    do_convert_rgb = True
    do_sample_frames = False
    output_name = "pixel_values_videos"

    def _decode_and_sample_videos(self, videos: Any, video_metadata: Any, do_sample_frames: bool | None = None,
                                  sample_indices_fn: Any = None) -> tuple[list[Any], list[Any]]:
        if do_sample_frames:
            raise ValueError("FramesVideoProcessor samples no frames: give the sampled frames")
        batched = make_batched_videos(videos)
        return batched, make_batched_metadata(batched, video_metadata=video_metadata)

    def _prepare_input_videos(self, videos: list[Any], **kwargs: Any) -> list[list[Image.Image]]:
        return [[Image.fromarray(np.asarray(frame)).convert("RGB") for frame in video] for video in videos]

    def _preprocess(self, videos: list[list[Image.Image]], return_tensors: Any = None, **kwargs: Any) -> BatchFeature:
        pixels = [self.normalised(video, self.size["height"], self.size["width"]) for video in videos]
        return BatchFeature({self.output_name: np.stack(pixels)}, tensor_type=return_tensors)

    def normalised(self, video: list[Image.Image], height: int, width: int) -> np.ndarray:
        """The frames resized to ``height`` × ``width``, rescaled and normalised: (frames, channels, height, width)."""
        mean = np.asarray(self.image_mean, dtype=np.float32)[:, None, None]
        std = np.asarray(self.image_std, dtype=np.float32)[:, None, None]
        return np.stack([(np.asarray(frame.resize((width, height), self.resample), dtype=np.float32)
                          .transpose(2, 0, 1) / 255.0 - mean) / std for frame in video])


class QwenFramesVideoProcessor(FramesVideoProcessor):
    """What Qwen2-VL's video processor does with frames already sampled: frames resized to the size ``smart_resize``
    picks (a multiple of the merged patch, ``size`` giving the least and most pixels), repeated at the end up to a
    multiple of ``temporal_patch_size``, then cut into flattened patches of that many frames each, merged patches
    adjacent, and the grid of each video (``video_grid_thw``)."""

    patch_size = 14
    temporal_patch_size = 2
    merge_size = 2
    size: ClassVar[dict[str, int]] = {"shortest_edge": 56 * 56, "longest_edge": 28 * 28 * 1280}

    def _preprocess(self, videos: list[list[Image.Image]], return_tensors: Any = None, **kwargs: Any) -> BatchFeature:
        from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize

        patch, merge, temporal = self.patch_size, self.merge_size, self.temporal_patch_size
        patches, grids = [], []
        for video in videos:
            width, height = video[0].size
            height, width = smart_resize(height, width, factor=patch * merge, min_pixels=self.size["shortest_edge"],
                                         max_pixels=self.size["longest_edge"])
            frames = self.normalised(video, height, width)
            if pad := -len(frames) % temporal:
                frames = np.concatenate([frames, np.repeat(frames[-1:], pad, axis=0)])
            grid_t, grid_h, grid_w = len(frames) // temporal, height // patch, width // patch
            channels = frames.shape[1]
            cut = frames.reshape(grid_t, temporal, channels, grid_h // merge, merge, patch, grid_w // merge, merge,
                                 patch)
            # (time, rows of merged patches, their columns, row in merge, column in merge, channel, frame, y, x)
            cut = cut.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
            patches.append(cut.reshape(grid_t * grid_h * grid_w, channels * temporal * patch * patch))
            grids.append([grid_t, grid_h, grid_w])
        return BatchFeature({"pixel_values_videos": np.concatenate(patches), "video_grid_thw": np.asarray(grids)},
                            tensor_type=return_tensors)


class Gemma4FramesVideoProcessor(FramesVideoProcessor):
    """What Gemma 4's video processor does with frames already sampled: each frame goes through the steps of its
    image processor (resized keeping the aspect ratio to at most ``max_soft_tokens`` × pooling² patches, rescaled,
    cut into patches padded to that budget, with their positions), here its PIL image processor; the frames of all
    videos are concatenated, with each video's frame count and soft tokens per frame."""

    patch_size = 16
    pooling_kernel_size = 3
    max_soft_tokens = 70

    def _preprocess(self, videos: list[list[Image.Image]], return_tensors: Any = None, **kwargs: Any) -> BatchFeature:
        from transformers import Gemma4ImageProcessorPil

        frames = Gemma4ImageProcessorPil(patch_size=self.patch_size, pooling_kernel_size=self.pooling_kernel_size,
                                         max_soft_tokens=self.max_soft_tokens)
        done = [frames(images=video, return_tensors="np") for video in videos]
        return BatchFeature({
            "pixel_values_videos": np.concatenate([video["pixel_values"] for video in done]),
            "video_position_ids": np.concatenate([video["image_position_ids"] for video in done]),
            "num_frames_per_video": [len(video) for video in videos],
            "num_soft_tokens_per_video": [int(video["num_soft_tokens_per_image"][0]) for video in done],
        }, tensor_type=return_tensors)


class ClipFramesVideoProcessor(FramesVideoProcessor):
    """What LLaVA-NeXT-Video's and Video-LLaVA's video processors do with frames already sampled (both take CLIP's
    steps): each frame resized so that its shorter side is ``size["shortest_edge"]`` (the aspect ratio kept), centre
    cropped to ``crop_size``, rescaled and normalised with CLIP's mean and std, here by CLIP's PIL image processor;
    ``pixel_values_videos`` of shape (videos, frames, channels, height, width)."""

    size: ClassVar[dict[str, int]] = {"shortest_edge": 224}
    crop_size: ClassVar[dict[str, int]] = {"height": 224, "width": 224}

    def _preprocess(self, videos: list[list[Image.Image]], return_tensors: Any = None, **kwargs: Any) -> BatchFeature:
        from transformers import CLIPImageProcessorPil

        frames = CLIPImageProcessorPil(size=dict(self.size), crop_size=dict(self.crop_size), resample=self.resample,
                                       image_mean=list(self.image_mean), image_std=list(self.image_std))
        pixels = [frames(images=video, return_tensors="np")["pixel_values"] for video in videos]
        return BatchFeature({"pixel_values_videos": np.stack(pixels)}, tensor_type=return_tensors)


class _FramesVideoConfig(PretrainedConfig):
    """A model type of its own to register the processor under, so no real family's mapping is changed."""

    model_type = "mmbatch_frames_video"


class _QwenFramesVideoConfig(PretrainedConfig):
    """The same for :class:`QwenFramesVideoProcessor`."""

    model_type = "mmbatch_qwen_frames_video"


class _Gemma4FramesVideoConfig(PretrainedConfig):
    """The same for :class:`Gemma4FramesVideoProcessor`."""

    model_type = "mmbatch_gemma4_frames_video"


class _ClipFramesVideoConfig(PretrainedConfig):
    """The same for :class:`ClipFramesVideoProcessor`."""

    model_type = "mmbatch_clip_frames_video"


def register() -> None:
    """Let ``AutoVideoProcessor`` (so ``AutoProcessor.from_pretrained``) load a saved one. Idempotent."""
    from tests.support.video_standin import register as register_stand_in

    register_stand_in()
    AutoVideoProcessor.register(_FramesVideoConfig, video_processor_classes={"torchvision": FramesVideoProcessor},
                                exist_ok=True)
    AutoVideoProcessor.register(_QwenFramesVideoConfig,
                                video_processor_classes={"torchvision": QwenFramesVideoProcessor}, exist_ok=True)
    AutoVideoProcessor.register(_Gemma4FramesVideoConfig,
                                video_processor_classes={"torchvision": Gemma4FramesVideoProcessor}, exist_ok=True)
    AutoVideoProcessor.register(_ClipFramesVideoConfig,
                                video_processor_classes={"torchvision": ClipFramesVideoProcessor}, exist_ok=True)
