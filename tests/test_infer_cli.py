"""``mmbatch infer`` end to end in real subprocesses, with the deterministic ``echo`` backend."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from mmbatch.infer.runner import plan_chunks
from mmbatch.tableio import read_metadata, read_table
from tests.conftest import run_cli
from tests.support.prepared_files import prepared_frame, write_prepared

PREDICTION_COLUMNS = ["prediction", "choice_logprobs", "choice_ntokens", "model", "error", "output_tokens",
                      "latency_ms"]


def infer(prepared: Path, output: Path, *extra: str, model: str = "answer", env: dict | None = None):
    return run_cli("infer", "--input", str(prepared), "--output", str(output), "--backend", "echo",
                   "--model", model, *extra, env=env)


def test_generate_output_columns_order_and_metadata(tmp_path: Path) -> None:
    frame = prepared_frame(5, copies=2)
    prepared = write_prepared(tmp_path / "prep.parquet", frame)
    result = infer(prepared, tmp_path / "preds.parquet")
    assert result.returncode == 0, result.stderr
    assert "10 rows, 10 run now, 0 reused" in result.stdout and "output tokens" in result.stdout
    table = read_table(tmp_path / "preds.parquet")
    out = table.frame
    assert out.columns == [c for c in frame.columns if c != "image"] + PREDICTION_COLUMNS
    assert out["index"].to_list() == sorted(frame["index"].to_list())
    assert out["prediction"].to_list() == out["answer"].to_list()
    assert out["model"].unique().to_list() == ["answer"] and out["error"].null_count() == 10
    assert out["source"].to_list() == frame.sort("index")["source"].to_list()
    infer_meta = table.metadata["infer"]
    assert table.metadata["stage"] == "predictions" and table.metadata["prepare"] == {"benchmark": "mmbench"}
    for key in ("backend", "model", "revision", "dtype", "max_new_tokens", "temperature", "prompt_templates",
                "mmbatch_version", "backend_settings", "input_fingerprint", "shard", "num_frames"):
        assert key in infer_meta, key
    assert infer_meta["prompt_templates"] == ["vlmevalkit"] and infer_meta["shard"] == "0/1"
    assert not (tmp_path / "preds.parquet.partial").exists()
    assert run_cli("validate", str(tmp_path / "preds.parquet")).returncode == 0


def test_likelihood_rows_and_letter_target_in_tsv(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prep.tsv", prepared_frame(4, copies=1, mode="likelihood"))
    result = infer(prepared, tmp_path / "content.tsv")
    assert result.returncode == 0, result.stderr
    out = read_table(tmp_path / "content.tsv").frame
    assert out["prediction"].null_count() == out.height
    for logprobs, ntokens, answer in out.select("choice_logprobs", "choice_ntokens", "answer").rows():
        assert len(logprobs) == len(ntokens) == 4
        assert "ABCD"[logprobs.index(max(logprobs))] == answer
        assert ntokens[0] == 3  # "a red square" / "a blue circle"... are three words
    letters = infer(prepared, tmp_path / "letter.tsv", "--likelihood-target", "letter")
    assert letters.returncode == 0, letters.stderr
    out = read_table(tmp_path / "letter.tsv").frame
    assert out["choice_ntokens"].to_list() == [[1, 1, 1, 1]] * 4
    assert read_metadata(tmp_path / "letter.tsv")["infer"]["likelihood_target"] == "letter"
    assert run_cli("validate", str(tmp_path / "letter.tsv")).returncode == 0


def test_invalid_prepared_file_is_refused_before_the_model_loads(tmp_path: Path) -> None:
    frame = prepared_frame(2, copies=1)
    bad = frame.with_columns(pl.Series("index", [1, 1]))
    prepared = write_prepared(tmp_path / "bad.parquet", bad)
    # A model path that does not exist: had it been loaded first, the error would be about the model.
    result = run_cli("infer", "--input", str(prepared), "--output", str(tmp_path / "o.parquet"), "--backend", "hf",
                     "--model", str(tmp_path / "no-such-model"))
    assert result.returncode == 2
    assert "duplicate index" in result.stderr and "bad.parquet" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "o.parquet").exists()
    missing = run_cli("infer", "--input", str(tmp_path / "nope.parquet"), "--output", str(tmp_path / "o.parquet"),
                      "--backend", "echo", "--model", "answer")
    assert missing.returncode == 2 and "no such file" in missing.stderr
    bad_mode = infer(write_prepared(tmp_path / "ok.parquet", frame), tmp_path / "o.parquet", model="sing")
    assert bad_mode.returncode == 2 and "echo backend answers with one of" in bad_mode.stderr


def test_missing_media_fails_its_row_only_and_a_rerun_retries_it(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    Image.new("RGB", (9, 9)).save(tmp_path / "img" / "ok.png")
    frame = prepared_frame(4, copies=1).drop("image").with_columns(
        pl.Series("image_path", ["img/ok.png", "img/late.png", "img/ok.png", "img/ok.png"]))
    prepared = write_prepared(tmp_path / "prep.parquet", frame)
    output = tmp_path / "preds.parquet"
    first = infer(prepared, output, model="media")
    assert first.returncode == 3, first.stderr
    assert "1 failed" in first.stdout and "failed row index=2" in first.stdout
    out = read_table(output).frame
    assert out.filter(pl.col("index") == 2)["error"].item().startswith("column 'image_path'")
    assert out.filter(pl.col("index") != 2)["prediction"].to_list() == ["1 image 9x9"] * 3
    Image.new("RGB", (5, 5)).save(tmp_path / "img" / "late.png")
    second = infer(prepared, output, model="media")
    assert second.returncode == 0, second.stderr
    assert "3 already done, 1 to run" in second.stderr
    out = read_table(output).frame
    assert out["error"].null_count() == 4 and out.filter(pl.col("index") == 2)["prediction"].item() == "1 image 5x5"


def test_other_settings_are_refused_unless_forced(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prep.parquet", prepared_frame(3, copies=1))
    output = tmp_path / "preds.parquet"
    assert infer(prepared, output).returncode == 0
    again = infer(prepared, output, "--max-new-tokens", "7")
    assert again.returncode == 2 and "max_new_tokens differ" in again.stderr and "--force" in again.stderr
    other_model = infer(prepared, output, model="fixed:Z")
    assert other_model.returncode == 2 and "model differ" in other_model.stderr
    forced = infer(prepared, output, "--force", model="fixed:Z")
    assert forced.returncode == 0 and read_table(output).frame["prediction"].to_list() == ["Z"] * 3
    # The input changed: its fingerprint no longer matches.
    write_prepared(prepared, prepared_frame(3, copies=1).with_columns(pl.lit("other").alias("source")))
    changed = infer(prepared, output, model="fixed:Z")
    assert changed.returncode == 2 and "input_fingerprint differ" in changed.stderr
    # Batch size does not change predictions, so it may change between runs.
    assert infer(prepared, output, "--force", "--batch-size", "2", model="fixed:Z").returncode == 0
    assert infer(prepared, output, "--batch-size", "4", model="fixed:Z").returncode == 0


def test_rows_are_planned_by_mode_then_prompt_length() -> None:
    frame = prepared_frame(6, copies=1).with_columns(
        pl.Series("mode", ["likelihood", "generate"] * 3))
    plan = plan_chunks(frame, size=2)
    assert [mode for mode, _ in plan] == ["generate", "generate", "likelihood", "likelihood"]
    for mode in ("generate", "likelihood"):
        lengths = [len(p) for m, rows in plan if m == mode for p in rows["prompt"].to_list()]
        assert lengths == sorted(lengths)


@pytest.mark.parametrize("model,expected", [("fixed:The answer is B", "The answer is B"), ("letter:C", "C")])
def test_echo_modes(tmp_path: Path, model: str, expected: str) -> None:
    prepared = write_prepared(tmp_path / "prep.parquet", prepared_frame(2, copies=1))
    result = infer(prepared, tmp_path / "p.parquet", model=model)
    assert result.returncode == 0, result.stderr
    assert read_table(tmp_path / "p.parquet").frame["prediction"].to_list() == [expected] * 2
    assert json.loads(json.dumps(read_metadata(tmp_path / "p.parquet")["infer"]["model"])) == model
