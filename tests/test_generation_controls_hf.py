"""``--system-prompt`` and ``--gen-arg`` on a real tiny LLaVA (``hf`` backend), through the in-process CLI.

Each answer is compared with ``model.generate`` on the model's own ``apply_chat_template`` inputs, one row at a
time (no padding), with transformers' own settings: the system message must reach the model through its chat
template, and the repetition penalty and stop strings must give the same answers in any batch.
"""

from __future__ import annotations

import base64
import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from support.prepared_files import prepared_frame, write_prepared
from support.tiny_models import session_model_dir
from support.tiny_tokenizer import LLAVA_CHAT_TEMPLATE

from mmbatch.cli import main
from mmbatch.tableio import read_table

SYSTEM_TEMPLATE = ("{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'][0]['text'] }}\n"
                   "{% set messages = messages[1:] %}{% endif %}" + LLAVA_CHAT_TEMPLATE)
"""LLaVA's format with the system text first, on its own line, as LLaVA-1.5 was trained."""
REJECTING_TEMPLATE = ("{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
                      "{% endif %}" + LLAVA_CHAT_TEMPLATE)
DROPPING_TEMPLATE = "{% set messages = messages | rejectattr('role', 'equalto', 'system') | list %}" + \
    LLAVA_CHAT_TEMPLATE
SYSTEM = "You are a meticulous visual assistant. Look at every detail and answer with one option letter."


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_model_dir(tmp_path_factory, "llava")


def with_template(model: Path, folder: Path, template: str) -> Path:
    """A copy of ``model`` whose chat template is ``template`` (the weights are linked, not copied)."""
    folder.mkdir()
    for item in model.iterdir():
        if item.name == "model.safetensors":
            (folder / item.name).symlink_to(item)
        elif item.name != "chat_template.jinja":
            shutil.copy(item, folder / item.name)
    (folder / "chat_template.jinja").write_text(template, encoding="utf-8")
    return folder


def infer(model: Path, prepared: Path, output: Path, *extra: str) -> int:
    return main(["infer", "--input", str(prepared), "--output", str(output), "--backend", "hf", "--model",
                 str(model), "--device", "cpu", "--dtype", "float32", *extra])


def reference_answers(model_dir: Path, prepared: Path, *, max_new_tokens: int, system: str | None = None,
                      **settings: Any) -> dict[int, tuple[str, int]]:
    """index -> (answer, tokens) from ``model.generate`` on ``apply_chat_template(tokenize=True)``, row by row."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor, GenerationConfig

    processor = AutoProcessor.from_pretrained(model_dir)
    model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32).eval()
    frame = read_table(prepared).frame
    payloads = {row["index"]: row["image"] for row in frame.iter_rows(named=True)}
    answers = {}
    for row in frame.iter_rows(named=True):
        payload = row["image"] if not row["image"].isdigit() else payloads[int(row["image"])]
        image = Image.open(io.BytesIO(base64.b64decode(payload))).convert("RGB")
        messages: list[dict[str, Any]] = [{"role": "user", "content": [
            {"type": "image", "image": image}, {"type": "text", "text": row["prompt"]}]}]
        if system is not None:
            messages.insert(0, {"role": "system", "content": [{"type": "text", "text": system}]})
        inputs = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=True,
                                               return_tensors="pt")
        config = GenerationConfig(max_new_tokens=max_new_tokens, do_sample=False, num_beams=1,
                                  eos_token_id=model.generation_config.eos_token_id,
                                  pad_token_id=model.generation_config.pad_token_id, **settings)
        with torch.inference_mode():
            generated = model.generate(**inputs, generation_config=config, tokenizer=processor.tokenizer)
        tokens = generated[0, inputs["input_ids"].shape[1]:].tolist()
        eos = model.generation_config.eos_token_id
        if eos in tokens:
            tokens = tokens[: tokens.index(eos) + 1]
        answers[row["index"]] = (processor.tokenizer.decode(tokens, skip_special_tokens=True).strip(), len(tokens))
    return answers


def predictions(output: Path) -> dict[int, tuple[str, int]]:
    frame = read_table(output).frame
    assert frame["error"].is_null().all(), frame["error"].to_list()
    return {row["index"]: (row["prediction"], row["output_tokens"]) for row in frame.iter_rows(named=True)}


@pytest.mark.slow
def test_the_system_prompt_reaches_the_model_through_its_template(tiny_llava: Path, tmp_path: Path) -> None:
    model = with_template(tiny_llava, tmp_path / "model", SYSTEM_TEMPLATE)
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(3, copies=2))
    assert infer(model, prepared, tmp_path / "out.parquet", "--batch-size", "4", "--max-new-tokens", "6",
                 "--system-prompt", SYSTEM) == 0
    expected = reference_answers(model, prepared, max_new_tokens=6, system=SYSTEM)
    assert predictions(tmp_path / "out.parquet") == expected
    # The comparison can fail: the system message changes this model's answers.
    assert expected != reference_answers(model, prepared, max_new_tokens=6)


@pytest.mark.parametrize(("template", "message"), [(REJECTING_TEMPLATE, "does not take a system message"),
                                                   (DROPPING_TEMPLATE, "leaves the system message out")])
def test_a_template_without_a_system_turn_is_refused_before_any_row(
        tiny_llava: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], template: str, message: str) -> None:
    model = with_template(tiny_llava, tmp_path / "model", template)
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(2, copies=1))
    assert infer(model, prepared, tmp_path / "out.parquet", "--system-prompt", SYSTEM) == 2
    error = capsys.readouterr().err
    assert message in error and str(model) in error
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.slow
def test_repetition_penalty_gives_the_same_answers_in_any_batch(tiny_llava: Path, tmp_path: Path) -> None:
    # Circular copies of different prompt lengths: padded batches, and groups that share their prefix at batch 4.
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(4, copies=2))
    expected = reference_answers(tiny_llava, prepared, max_new_tokens=10, repetition_penalty=1.8)
    for batch_size in ("1", "4"):
        output = tmp_path / f"out-{batch_size}.parquet"
        assert infer(tiny_llava, prepared, output, "--batch-size", batch_size, "--max-new-tokens", "10",
                     "--gen-arg", "repetition_penalty=1.8") == 0
        assert predictions(output) == expected, batch_size
    assert expected != reference_answers(tiny_llava, prepared, max_new_tokens=10)  # the penalty changes answers


def test_stop_strings_end_the_answer_before_them(tiny_llava: Path, tmp_path: Path) -> None:
    # Circular copies: groups that share their prefix, as well as padded batches.
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(3, copies=2))
    plain = reference_answers(tiny_llava, prepared, max_new_tokens=12)
    text, tokens = plain[1]
    stop = text[len(text) // 2: len(text) // 2 + 2]  # from the middle of row 1's answer
    assert stop.strip() and tokens > 2, plain
    assert infer(tiny_llava, prepared, tmp_path / "out.parquet", "--batch-size", "6", "--max-new-tokens", "12",
                 "--gen-arg", f"stop={stop}") == 0
    got = predictions(tmp_path / "out.parquet")
    for index, (answer, count) in plain.items():
        before = answer.split(stop)[0].strip()
        assert got[index][0] == before
        assert (got[index][1] < count) == (stop in answer)
    assert got[1][0] == text[: text.index(stop)].strip() and got[1][1] < tokens


def test_the_penalty_ignores_padding_exactly_as_on_the_unpadded_row() -> None:
    import torch
    from transformers import RepetitionPenaltyLogitsProcessor

    from mmbatch.backends.hf.decoding import unpadded_repetition_penalty

    pad = 0
    prompts = [[7, 3, 3, 9], [4, 8]]  # the second row is left-padded with two pad tokens
    width = max(len(prompt) for prompt in prompts)
    prompt_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    generated = torch.tensor([[5], [pad]])  # the second row generated the pad token itself: that one counts
    input_ids = torch.cat([prompt_ids, generated], dim=1)
    scores = torch.randn(2, 12, generator=torch.Generator().manual_seed(0))
    ours = unpadded_repetition_penalty(1.7, mask)(input_ids, scores.clone())
    reference = RepetitionPenaltyLogitsProcessor(1.7)
    for row, prompt in enumerate(prompts):
        own = torch.tensor([[*prompt, int(generated[row, 0])]])
        assert torch.equal(ours[row], reference(own, scores[row:row + 1].clone())[0])
    padded_row = torch.tensor([[pad, pad, 4, 8]])  # what transformers' processor alone would count for row 2
    assert not torch.equal(reference(padded_row, scores[1:2].clone())[0],
                           reference(torch.tensor([[4, 8]]), scores[1:2].clone())[0])


def test_likelihood_rows_are_scored_in_the_same_conversation(tiny_llava: Path, tmp_path: Path) -> None:
    model = with_template(tiny_llava, tmp_path / "model", SYSTEM_TEMPLATE)
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(2, copies=1, mode="likelihood"))
    scores = {}
    for name, extra in (("plain", ()), ("system", ("--system-prompt", SYSTEM))):
        assert infer(model, prepared, tmp_path / f"{name}.parquet", *extra) == 0
        scores[name] = read_table(tmp_path / f"{name}.parquet").frame["choice_logprobs"].to_list()
    assert all(len(row) == 4 for row in scores["system"])
    assert scores["system"] != scores["plain"]


def test_top_k_1_sampling_is_greedy(tiny_llava: Path, tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(3, copies=1))
    greedy = reference_answers(tiny_llava, prepared, max_new_tokens=8)
    args = ("--batch-size", "3", "--max-new-tokens", "8", "--temperature", "1.5")
    assert infer(tiny_llava, prepared, tmp_path / "top1.parquet", *args, "--gen-arg", "top_k=1") == 0
    assert predictions(tmp_path / "top1.parquet") == greedy  # top_k reached generate
    assert infer(tiny_llava, prepared, tmp_path / "sampled.parquet", *args, "--gen-arg", "seed=5") == 0
    assert predictions(tmp_path / "sampled.parquet") != greedy  # at this temperature sampling leaves greedy
