"""The judge's prompts, byte for byte as VLMEvalKit sends them (docs/rules.md §4 and §6).

Their exact bytes matter twice: they are what reproduces VLMEvalKit's judge decisions, and they are the key of the
judge cache. Typos ("Your should") and odd spacing ("Z. \\n", "例 1:问题") are part of the originals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from mmbatch.prompts import contains_cjk

MCQ_TEMPLATE_EN = (
    "You are an AI assistant who will help me to match an answer with several options of a single-choice question. "
    "You are provided with a question, several options, and an answer, "
    "and you need to find which option is most similar to the answer. "
    "If the meaning of all options are significantly different from the answer, output Z. "
    "Your should output a single uppercase character in A, B, C, D (if they are valid options), and Z. \n"
    "Example 1: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: a cute teddy bear\nYour output: A\n"
    "Example 2: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: Spider\nYour output: Z\n"
    "Example 3: \n"
    "Question: {question}?\nOptions: {options}\nAnswer: {prediction}\nYour output: "
)
"""VLMEvalKit ``build_prompt``: English MCQ judge prompt."""

MCQ_TEMPLATE_CN = (
    "你是一个帮助我匹配答案与单选题中多个选项的 AI 助手。"
    "你会被提供：一个问题，多个选项，一个答案。"
    "你的任务是找到与答案意义最相近的选项。"
    "如果所有选项的意义都与答案显著不同，则输出 Z。"
    "你应该输出一个单个的大写字母，例如 A, B, C, D（如果它们是有效选项），或 Z。"
    "例 1:"
    "问题: 图中最主要的物体是什么?\n选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 一只可爱的泰迪熊\n输出: A\n"
    "例 2: \n"
    "问题: 图中最主要的物体是什么?\n选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 蜘蛛\n输出: Z\n"
    "例 3: \n"
    "问题: {question}?\n选项: {options}\n答案: {prediction}\n输出: "
)
"""VLMEvalKit ``build_prompt_cn``: the Chinese MCQ judge prompt, used when the question holds a CJK character."""

YES_NO_TEMPLATE = (
    "You are an AI assistant who will help me to match an answer with two options of a question. "
    "The options are only Yes / No. "
    "You are provided with a question and an answer, "
    "and you need to find which option (Yes / No) is most similar to the answer. "
    "If the meaning of all options are significantly different from the answer, output Unknown. "
    "Your should output a single word among the following 3 choices: Yes, No, Unknown.\n"
    "Example 1: \n"
    "Question: Is the word in this image 'Hello'?\nAnswer: The word in this image is 'Hello'.\nYour output: Yes\n"
    "Example 2: \n"
    "Question: Is the word in this image 'Hello'?\n"
    "Answer: The word in this image is not 'Hello'.\nYour output: No\n"
    "Example 3: \n"
    "Question: {question}?\nAnswer: {prediction}\nYour output: "
)
"""VLMEvalKit ``YOrN_match_prompt``: the yes/no judge prompt (MME with ``--yes-no-rule vlmevalkit``)."""


def options_block(choices: Mapping[str, str]) -> str:
    """VLMEvalKit ``build_option_str``: a header line, then one ``L. text`` line per present option."""
    return "There are several options: \n" + "".join(f"{letter}. {text}\n" for letter, text in choices.items())


def mcq_judge_prompt(question: str, choices: Mapping[str, str], prediction: str) -> str:
    """The MCQ judge prompt for one row; Chinese when the question holds a CJK ideograph.

    ``?`` is appended to the question even when it already ends in one, as VLMEvalKit does.
    """
    template = MCQ_TEMPLATE_CN if contains_cjk(question) else MCQ_TEMPLATE_EN
    return template.format(question=question, options=options_block(choices), prediction=prediction)


def yes_no_judge_prompt(question: str, prediction: str) -> str:
    """The yes/no judge prompt for one MME row."""
    return YES_NO_TEMPLATE.format(question=question, prediction=prediction)


def template_hash(*templates: str) -> str:
    """First 16 hex digits of the SHA-256 of the templates in use, recorded in the output metadata."""
    digest = hashlib.sha256()
    for template in templates:
        digest.update(template.encode("utf-8"))
    return digest.hexdigest()[:16]
