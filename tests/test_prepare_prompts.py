"""Prompts rendered by ``prepare``: byte-identical to docs/rules.md §2, other templates, hashes, recorded settings."""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import polars as pl
import pytest

from mmbatch.prepare import PrepareOptions, prepare, with_prompts
from mmbatch.tableio import read_table
from tests.conftest import EXAMPLES, REPO_ROOT, run_cli

RULES = REPO_ROOT / "docs" / "rules.md"
VLMEVALKIT = EXAMPLES / "mmbench" / "mmbench_example.tsv"


def protocol_lines() -> dict[str, str]:
    """The line templates of the §2 code block, each up to its literal ``\\n`` (so trailing spaces are kept)."""
    text = RULES.read_text(encoding="utf-8")
    section = text[text.index("## 2."):text.index("## 3.")]
    block = section[section.index("```\n") + 4:]
    block = textwrap.dedent(block[:block.index("```")])
    lines = [line.split("\\n")[0] for line in block.splitlines() if "\\n" in line]
    return {"hint": lines[0], "question": lines[1], "options": lines[2], "option": lines[3], "instruction": lines[4]}


def expected_prompt(question: str, hint: str | None, options: dict[str, str]) -> str:
    """Build the §2 prompt from the protocol's own line templates."""
    spec = protocol_lines()
    text = spec["hint"].replace("{hint}", hint) + "\n" if hint else ""
    text += spec["question"].replace("{question}", question) + "\n"
    if options:
        text += spec["options"] + "\n"
        for letter, option in options.items():
            text += spec["option"].replace("{L}", letter).replace("{option text}", option) + "\n"
        text += spec["instruction"] + "\n"
    return text


def test_the_protocol_block_is_what_this_test_reads() -> None:
    spec = protocol_lines()
    assert spec["instruction"] == "Please select the correct answer from the options above. "  # the space before \n
    assert spec["option"] == "{L}. {option text}"


def rows(**columns: list[object]) -> pl.DataFrame:
    return pl.DataFrame(columns, schema={name: pl.String for name in columns})


@pytest.mark.parametrize(("hint", "options"), [
    (None, {"A": "red", "B": "blue", "C": "green", "D": "yellow"}),
    ("The picture shows one shape.", {"A": "red", "B": "blue", "C": "green", "D": "yellow"}),
    ("nan", {"A": "red", "B": "blue"}),  # pandas writes NaN hints as "nan" in some files: no hint line
    (None, {"A": "red", "B": "blue", "D": "green"}),  # option C missing: A, B, D, never relabelled
    ("图中只有一个形状。", {"A": "红色", "B": "绿色"}),
    (None, {}),  # no options: no Options block, no instruction line
])
def test_vlmevalkit_prompt_is_byte_identical_to_the_protocol(hint: str | None, options: dict[str, str]) -> None:
    letters = ["A", "B", "C", "D"]
    frame = rows(question=["What colour is the circle?"], hint=[hint],
                 **{letter: [options.get(letter)] for letter in letters})
    prompt = with_prompts(frame, "vlmevalkit", "generate")["prompt"][0]
    shown_hint = None if hint in (None, "nan") else hint
    assert prompt == expected_prompt("What colour is the circle?", shown_hint, options)
    assert prompt.endswith("above. \n") if options else prompt.endswith("circle?\n")


def test_prompts_of_the_example_file(tmp_path: Path) -> None:
    output = tmp_path / "prepared.parquet"
    prepare(PrepareOptions(benchmark="mmbench", input=VLMEVALKIT, output=output))
    table = read_table(output)
    prompts = dict(table.frame.select("index", "prompt").iter_rows())
    assert prompts[124] == expected_prompt("What colour is the triangle?", None,
                                           {"A": "red", "B": "blue", "D": "green"})
    assert prompts[104] == expected_prompt("What colour is the circle?", "Look carefully.\nThe picture is small.",
                                           {"A": "red", "B": "green", "C": "blue", "D": "yellow"})
    assert prompts[1_000_123] == expected_prompt("What is drawn inside the black square?", None,
                                                 {"A": "a star", "B": "None", "C": "a circle"})
    frame = table.frame
    assert set(frame["prompt_template"]) == {"vlmevalkit"} and set(frame["mode"]) == {"generate"}
    hashes = frame.select("prompt", "prompt_hash").rows()
    assert all(h == hashlib.sha256(p.encode()).hexdigest()[:16] for p, h in hashes)
    assert table.metadata["prepare"]["template"] == "vlmevalkit" and table.metadata["prepare"]["mode"] == "generate"


def test_llava_template_with_chinese_instruction(tmp_path: Path) -> None:
    output = tmp_path / "llava.tsv"
    result = run_cli("prepare", "--benchmark", "mmbench", "--input", str(VLMEVALKIT), "--output", str(output),
                     "--prompt-template", "llava", "--limit", "22")
    assert result.returncode == 0, result.stderr
    prompts = dict(read_table(output).frame.select("index", "prompt").iter_rows())
    assert prompts[101] == ("The picture shows one shape.\nWhat colour is the square?\nA. red\nB. green\nC. blue\n"
                            "D. yellow\nAnswer with the option's letter from the given choices directly.")
    assert prompts[119] == ("图中只有一个形状。\n图中的圆形是什么颜色？\nA. 红色\nB. 绿色\nC. 蓝色\nD. 黄色\n"
                            "请直接回答选项字母。")
    assert read_table(output).metadata["prepare"]["template"] == "llava"


def test_likelihood_mode_and_seed_template(tmp_path: Path) -> None:
    output = tmp_path / "likelihood.parquet"
    summary = prepare(PrepareOptions(benchmark="mmbench", input=VLMEVALKIT, output=output,
                                     prompt_template="seed-likelihood", mode="likelihood", limit=2))
    frame = read_table(output).frame
    assert summary.rows == frame.height == 8
    assert set(frame["mode"]) == {"likelihood"}
    assert frame["prompt"][0] == "Question: What colour is the circle?\nAnswer:"


def test_re_preparing_a_prepared_file_renders_the_same_prompts(tmp_path: Path) -> None:
    first, second = tmp_path / "first.tsv", tmp_path / "second.tsv"
    prepare(PrepareOptions(benchmark="mmbench", input=VLMEVALKIT, output=first))
    prepare(PrepareOptions(benchmark="mmbench", input=first, output=second))
    assert read_table(first).frame.equals(read_table(second).frame)
    assert read_table(second).metadata["prepare"]["input"] == str(first)
