"""A stand-in for the video processor of multimodal processors, for this test environment only.

Why it exists: in ``transformers`` 5.x every processor with a ``video_processor`` attribute (Qwen2/2.5/3-VL, Qwen3.5,
GLM-4V, LLaVA-OneVision, InternVL, SmolVLM, Gemma 4, Mistral3's Pixtral...) needs a video processor object to be built
and loaded, and every video processor class of the library derives from ``BaseVideoProcessor``, which requires
``torchvision``. torchvision does not import on this machine, so none of those processors can be built here, even with
``video_processor=None`` (``ProcessorMixin`` then fails to save or load it). The product never depends on torchvision.

The stand-in is the smallest object the processor accepts in that slot: a ``VideoProcessorMixin`` (the base class
``ProcessorMixin`` checks for) that keeps whatever settings it is given as attributes — ``merge_size`` and
``temporal_patch_size`` for the Qwen family, ``num_frames`` and ``fps`` for SmolVLM, ``patch_size`` for Gemma 4 —
because some processors read them even on image-only inputs (SmolVLM's ``apply_chat_template`` does). It is saved
under its own class name, and :func:`register` makes ``AutoVideoProcessor`` (which ``AutoProcessor.from_pretrained``
asks for the ``video_processor`` slot) find that name again. It processes no video: given one it raises, so a test
can never get a wrong video input from it silently.

Usage in a builder and in the process that loads the model back::

    register()
    video_processor = VideoProcessorStandIn(merge_size=2)
    processor = Qwen2VLProcessor(image_processor=..., tokenizer=..., video_processor=video_processor)
    processor.save_pretrained(directory)
    AutoProcessor.from_pretrained(directory)  # the stand-in comes back, with merge_size=2

:func:`tests.support.families.family_model` registers it, so every family model is loaded with it in place.
"""

from __future__ import annotations

from typing import Any

from transformers import PretrainedConfig, processing_utils
from transformers.models.auto.video_processing_auto import AutoVideoProcessor
from transformers.video_processing_utils import VideoProcessorMixin


class VideoProcessorStandIn(VideoProcessorMixin):
    """Fills a processor's ``video_processor`` slot where the library's video processors need torchvision."""

    def __init__(self, **settings: Any) -> None:
        """Keep ``settings`` (the real video processor's attributes the processor reads) as attributes."""
        super().__init__(**settings)

    def preprocess(self, videos: Any, **kwargs: Any) -> Any:
        """Refuse: this stand-in exists so image inputs can be tested; it must never produce video inputs."""
        raise NotImplementedError(
            "VideoProcessorStandIn (tests/support/video_standin.py) processes no video: the library's video "
            "processors need torchvision, which does not import in this test environment")


class _StandInConfig(PretrainedConfig):
    """A model type of its own to register the stand-in under, so no real family's mapping is changed."""

    model_type = "mmbatch_video_standin"


def register() -> None:
    """Let processors accept the stand-in and ``AutoProcessor.from_pretrained`` load it back. Idempotent.

    Two look-ups need it. A processor checks its ``video_processor`` argument against the class named
    ``VideoProcessorMixin`` found on the ``transformers`` package, which exports that name only when torchvision is
    installed, although the class itself imports without it: the real class is put there. ``AutoVideoProcessor``
    looks a saved ``video_processor_type`` up among the classes registered with it by name and asks for the
    ``torchvision`` backend's class: the stand-in is registered as that.
    """
    processing_utils.transformers_module.VideoProcessorMixin = VideoProcessorMixin
    AutoVideoProcessor.register(_StandInConfig, video_processor_classes={"torchvision": VideoProcessorStandIn},
                                exist_ok=True)
