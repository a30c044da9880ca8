"""Mllama (Llama 3.2 Vision): a tiled vision encoder with global layers, a Llama text model that sees the image only
through cross-attention layers (``cross_attention_mask``). Like ``meta-llama/Llama-3.2-11B-Vision-Instruct``, the
tokenizer adds BOS and the chat template writes it too."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|image|>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "<|eot_id|>"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)
"""Llama 3.2 Vision's template for a conversation with images (the real one writes no system turn then)."""


def build_mllama(directory: Path) -> None:
    """Save a tiny Mllama: 56 px tiles of 14 px patches, up to 4 tiles (the matrix's pictures take 1, 2 and 4), a
    cross-attention layer between two plain ones."""
    import torch
    from transformers import (
        MllamaConfig,
        MllamaForConditionalGeneration,
        MllamaImageProcessorPil,
        MllamaProcessor,
        MllamaTextConfig,
        MllamaVisionConfig,
    )

    tokenizer = family_tokenizer(["<|python_tag|>", "<|start_header_id|>", "<|end_header_id|>"],
                                 bos="<|begin_of_text|>", eos="<|eot_id|>", pad="<|finetune_right_pad_id|>",
                                 add_bos=True, named={"image_token": "<|image|>"})
    tile, patch, vision_hidden, intermediate_layers = 56, 14, 32, [0, 1]
    processor = MllamaProcessor(
        image_processor=MllamaImageProcessorPil(size={"height": tile, "width": tile}, max_image_tiles=4),
        tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    config = MllamaConfig(
        vision_config=MllamaVisionConfig(
            hidden_size=vision_hidden, intermediate_size=64, num_hidden_layers=2, num_global_layers=1,
            attention_heads=2, image_size=tile, patch_size=patch, max_num_tiles=4,
            intermediate_layers_indices=intermediate_layers,
            # The last layer's features concatenated with those of each intermediate layer.
            vision_output_dim=vision_hidden * (1 + len(intermediate_layers)), initializer_range=0.1),
        text_config=MllamaTextConfig(
            **{key: value for key, value in text_sizes(tokenizer, num_hidden_layers=3).items() if key != "head_dim"},
            cross_attention_layers=[1]),
        image_token_index=tokenizer.convert_tokens_to_ids("<|image|>"),
    )
    torch.manual_seed(0)
    model = MllamaForConditionalGeneration(config)
    # The cross-attention gates start at zero (tanh(0): the image is ignored until trained); open them, or the matrix
    # would test text only.
    for name, gate in model.named_parameters():
        if name.endswith(("cross_attn_attn_gate", "cross_attn_mlp_gate")):
            torch.nn.init.constant_(gate, 1.0)
    finish(model, processor, directory)
