"""Phi-4-multimodal: a SigLIP-like tower over 448 px crops of the image (a global view plus as many crops as cover
it), each crop's 32x32 patches pooled 2x2 into 16x16 tokens with a separator token ending each row, then a Phi-3-like
text model (fused QKV and gate-up projections); beside it an audio (conformer) encoder, unused by image rows. It is
registered only for ``AutoModelForCausalLM`` (``Phi4MultimodalForCausalLM``), which mmbatch's loader falls back to.
Like ``microsoft/Phi-4-multimodal-instruct``, the tokenizer adds no BOS and the template writes none, turns are
``<|user|>...<|end|>`` and end with ``<|end|>``; the processor expands each image token into the image's tokens.

Its processor counts a crop as 256 + 16 tokens (the 448 px / 14 px layout of the published model), so the tiny model
keeps that layout and is tiny in width and depth only. Its image processor exists only in the torchvision build (no
PIL variant): the family runs in the test environment that has torchvision (``make torchvision-env``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes
from tests.support.tiny_models import WEIGHT_SCALE

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}{{ '<|image|>' }}{% elif content['type'] == 'audio' %}{{ '<|audio|>' }}"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|end|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)
"""Phi-4's turns (``<|system|>``, ``<|user|>``, ``<|assistant|>``, each ended by ``<|end|>``), an image written
``<|image|>`` where the message has one."""

TOKENS = {"image_token": "<|image|>", "audio_token": "<|audio|>"}
"""The media tokens the processor reads from its tokenizer."""

CROP, PATCH = 448, 14
"""The crop side and patch side the processor's token count assumes (256 tokens and 16 row separators a crop)."""


def build_phi4_multimodal(directory: Path) -> None:
    """Save a tiny Phi-4-multimodal: 448 px crops of 14 px patches through two vision layers of width 32, two text
    layers, and a one-block audio encoder of width 32."""
    import torch
    from transformers import (
        Phi4MultimodalAudioConfig,
        Phi4MultimodalConfig,
        Phi4MultimodalFeatureExtractor,
        Phi4MultimodalForCausalLM,
        Phi4MultimodalImageProcessor,
        Phi4MultimodalProcessor,
        Phi4MultimodalVisionConfig,
    )

    tokenizer = family_tokenizer(["<|system|>", "<|user|>", "<|assistant|>"], bos=None, eos="<|end|>",
                                 pad="<|endoftext|>", add_bos=False, named=TOKENS)
    processor = Phi4MultimodalProcessor(
        image_processor=Phi4MultimodalImageProcessor(size={"height": CROP, "width": CROP}, patch_size=PATCH,
                                                     dynamic_hd=4),
        audio_processor=Phi4MultimodalFeatureExtractor(), tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    text = text_sizes(tokenizer)
    text.pop("head_dim")  # the hidden size over the heads, as Phi-3 derives it
    image_token = tokenizer.convert_tokens_to_ids(TOKENS["image_token"])
    audio_token = tokenizer.convert_tokens_to_ids(TOKENS["audio_token"])
    config = Phi4MultimodalConfig(
        **text, rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        vision_config=Phi4MultimodalVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=CROP,
            patch_size=PATCH, crop_size=CROP, image_token_id=image_token),
        audio_config=Phi4MultimodalAudioConfig(
            hidden_size=32, intermediate_size=64, num_blocks=1, num_attention_heads=2, ext_pw_out_channel=32,
            depthwise_separable_out_channel=32, nemo_conv_channels=32, audio_token_id=audio_token,
            initializer_range=WEIGHT_SCALE))
    torch.manual_seed(0)
    finish(Phi4MultimodalForCausalLM(config), processor, directory)
