"""Tiny random-weight vision-language models, built offline for tests and the demo.

Everything is made here: a byte-level BPE tokenizer trained on a few sentences, the image processor configuration,
the model configuration with random weights, and a chat template that puts the images before the text. The result is
saved with ``save_pretrained`` so the backend loads it through the same ``AutoProcessor`` +
``AutoModelForImageTextToText`` path as a real checkpoint. Only PIL image processors are used (no torchvision).
"""

from __future__ import annotations

from pathlib import Path

# Sentences the tokenizer is trained on: enough English for the prompts and options of the tests to merge into
# multi-character tokens, so that tokenisation boundaries are exercised for real.
TRAINING_TEXT = [
    "Question: What is shown in the image? Answer with the option's letter from the given choices directly.",
    "Hint: Look at the picture carefully. Options: A. a red square B. a blue circle C. a green tree D. a cat",
    "The dog is running in the park. A man is riding a bicycle down the street.",
    "How many apples are on the table? There are three apples and two oranges.",
    "Is there a person in this image? Please answer yes or no. Yes No",
    "The answer is A. The answer is B. The answer is C. The answer is D.",
    "USER: ASSISTANT: User: Assistant: system user assistant",
    "0 1 2 3 4 5 6 7 8 9 10 one two three four five six seven eight nine ten",
]

WEIGHT_SCALE = 0.1
"""Standard deviation of the random weights: larger than the usual 0.02 so that answers and option scores differ
clearly from row to row, which the equality tests need in order to mean something."""

LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}USER: {% else %}ASSISTANT: {% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] if part['type'] == 'image' %}<image>\n{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'text' %}{{ part['text'] }}{% endfor %}"
    "{% endif %}"
    "{% if message['role'] == 'user' %} {% else %}</s>{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
"""LLaVA-1.5's conversation format: ``USER: <image>\\n{text} ASSISTANT:``."""

IDEFICS3_CHAT_TEMPLATE = (
    "<|im_start|>"
    "{% for message in messages %}"
    "{{ message['role'] | capitalize }}:"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] if part['type'] == 'image' %}<image>{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'text' %}{{ part['text'] }}{% endfor %}"
    "{% endif %}"
    "<end_of_utterance>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)
"""Idefics3's conversation format: ``<|im_start|>User:<image>{text}<end_of_utterance>\\nAssistant:``."""


def train_tokenizer(special_tokens: list[str], vocab_size: int = 400):
    """Train a byte-level BPE tokenizer on :data:`TRAINING_TEXT` and wrap it for ``transformers``.

    Args:
        special_tokens: Tokens kept whole (begin/end of sequence, padding, image placeholders...).
        vocab_size: Target vocabulary size, special tokens included.

    Returns:
        A ``PreTrainedTokenizerFast`` with ``<s>``, ``</s>`` and ``<pad>`` as bos, eos and pad tokens.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", "<s>", "</s>", *special_tokens],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(TRAINING_TEXT, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
        additional_special_tokens=special_tokens, padding_side="left",
    )


def build_tiny_llava(directory: Path, *, seed: int = 0) -> Path:
    """Save a tiny random-weight LLaVA (CLIP vision tower, Llama text model) with its processor.

    Args:
        directory: Where to save it (created).
        seed: Seed of the random weights.

    Returns:
        ``directory``, loadable with ``AutoProcessor`` and ``AutoModelForImageTextToText``.
    """
    import torch
    from transformers import (
        CLIPImageProcessorPil,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tokenizer = train_tokenizer(["<image>"])
    image_size, patch_size = 28, 14
    image_processor = CLIPImageProcessorPil(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size},
    )
    processor = LlavaProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=patch_size,
        vision_feature_select_strategy="default", num_additional_image_tokens=1,
        chat_template=LLAVA_CHAT_TEMPLATE,
    )
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
            image_size=image_size, patch_size=patch_size, projection_dim=32, initializer_range=WEIGHT_SCALE,
        ),
        text_config=LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id, initializer_range=WEIGHT_SCALE,
        ),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default", vision_feature_layer=-2,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    _save(model, processor, tokenizer, directory)
    return directory


def _save(model, processor, tokenizer, directory: Path) -> None:
    """Save model and processor, with generation settings that make greedy decoding stop at ``</s>``."""
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    processor.save_pretrained(directory)


IDEFICS3_SPECIAL_TOKENS = [
    "<image>", "<fake_token_around_image>", "<global-img>", "<end_of_utterance>", "<|im_start|>",
    *(f"<row_{row}_col_{col}>" for row in range(1, 7) for col in range(1, 7)),
]
"""The placeholders Idefics3's processor writes around image tokens (one per tile position up to 6x6)."""


def build_tiny_idefics3(directory: Path, *, seed: int = 0) -> Path:
    """Save a tiny random-weight Idefics3 (SigLIP-like vision tower, pixel shuffle, Llama text model).

    Images are split into tiles of 56 px plus a global view, as the real model does at 364 px.

    Args:
        directory: Where to save it (created).
        seed: Seed of the random weights.

    Returns:
        ``directory``, loadable with ``AutoProcessor`` and ``AutoModelForImageTextToText``.
    """
    import torch
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
        Idefics3VisionConfig,
        LlamaConfig,
    )

    tokenizer = train_tokenizer(IDEFICS3_SPECIAL_TOKENS)
    tile_size, patch_size, scale_factor = 56, 14, 2
    image_processor = Idefics3ImageProcessorPil(
        size={"longest_edge": 2 * tile_size}, max_image_size={"longest_edge": tile_size},
    )
    image_seq_len = (tile_size // patch_size) ** 2 // scale_factor**2
    processor = Idefics3Processor(
        image_processor=image_processor, tokenizer=tokenizer, image_seq_len=image_seq_len,
        chat_template=IDEFICS3_CHAT_TEMPLATE,
    )
    config = Idefics3Config(
        vision_config=Idefics3VisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
            image_size=tile_size, patch_size=patch_size, initializer_range=WEIGHT_SCALE,
        ),
        text_config=LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id, initializer_range=WEIGHT_SCALE,
        ),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"), scale_factor=scale_factor,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Idefics3ForConditionalGeneration(config)
    _save(model, processor, tokenizer, directory)
    return directory


BUILDERS = {"llava": build_tiny_llava, "idefics3": build_tiny_idefics3}
"""Architecture name -> builder."""


def build_cached(architecture: str, directory: Path) -> Path:
    """Build a tiny model into ``directory`` unless a finished build is already there.

    The build goes to a temporary sibling first and is renamed into place, so a run that is interrupted, or two runs
    at once, never leave a half-saved model behind.

    Args:
        architecture: ``llava`` or ``idefics3``.
        directory: The model directory to create.

    Returns:
        ``directory``.
    """
    import os
    import shutil
    import tempfile

    if (directory / "model.safetensors").is_file():
        return directory
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        BUILDERS[architecture](staging)
        try:
            os.rename(staging, directory)
        except OSError:
            # Another process finished first; its model is identical (same seed), keep it.
            if not (directory / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory


def session_model_dir(tmp_path_factory, architecture: str) -> Path:
    """The tiny model of ``architecture`` for this test session, built on first use into pytest's temporary base.

    Test modules call this from their own session-scoped fixtures; the build happens once per session however many
    modules ask for it.
    """
    return build_cached(architecture, tmp_path_factory.getbasetemp() / "tiny-models" / architecture)
