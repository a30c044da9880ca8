"""A byte-level BPE tokenizer trained on a few sentences, and chat templates, for the tiny test models."""

from __future__ import annotations

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


BOS_LLAVA_CHAT_TEMPLATE = "{{ bos_token }}" + LLAVA_CHAT_TEMPLATE
"""LLaVA's format behind a BOS the template writes itself, as Gemma 3, Idefics3, Mllama and Mistral 3 templates do."""


def train_tokenizer(special_tokens: list[str], vocab_size: int = 400, *, add_bos: bool = False):
    """Train a byte-level BPE tokenizer on :data:`TRAINING_TEXT` and wrap it for ``transformers``.

    Args:
        special_tokens: Tokens kept whole (begin/end of sequence, padding, image placeholders...).
        vocab_size: Target vocabulary size, special tokens included.
        add_bos: Prepend ``<s>`` when encoding with special tokens, as Llama's and Gemma's tokenizers do.

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
    if add_bos:
        from tokenizers import processors

        bos_id = core.token_to_id("<s>")
        core.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                            special_tokens=[("<s>", bos_id)])
    return PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
        additional_special_tokens=special_tokens, padding_side="left",
    )
