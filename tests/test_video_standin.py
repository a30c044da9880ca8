"""The test environment's video processor stand-in: a processor with a ``video_processor`` slot can be built, saved
and loaded back through ``AutoProcessor`` without torchvision, and the stand-in never processes a video."""

from __future__ import annotations

import pytest
from PIL import Image

from tests.support.tiny_tokenizer import train_tokenizer
from tests.support.video_standin import VideoProcessorStandIn, register


def test_a_qwen2_vl_processor_round_trips_with_the_stand_in(tmp_path) -> None:
    from transformers import AutoProcessor, Qwen2VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    register()
    tokenizer = train_tokenizer(["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"])
    built = Qwen2VLProcessor(image_processor=Qwen2VLImageProcessorPil(), tokenizer=tokenizer,
                             video_processor=VideoProcessorStandIn(merge_size=2, temporal_patch_size=2))
    built.save_pretrained(tmp_path)
    loaded = AutoProcessor.from_pretrained(tmp_path)

    assert type(loaded) is Qwen2VLProcessor
    assert isinstance(loaded.video_processor, VideoProcessorStandIn)
    assert (loaded.video_processor.merge_size, loaded.video_processor.temporal_patch_size) == (2, 2)
    # Image inputs go through the real PIL image processor: one placeholder per merged patch.
    image = Image.new("RGB", (56, 56))
    inputs = loaded(text=["<|vision_start|><|image_pad|><|vision_end|>hi"], images=[image], return_tensors="pt")
    pad = tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert int((inputs["input_ids"] == pad).sum()) == int(inputs["image_grid_thw"].prod()) // 4
    with pytest.raises(NotImplementedError, match="torchvision"):
        loaded.video_processor([[image, image]])
