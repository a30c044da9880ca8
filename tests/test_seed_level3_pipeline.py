"""SEED-Bench-2 level 3 end to end through the CLI: generate-image infer, CLIP extraction with a real (tiny) CLIP
loaded through AutoModel/AutoProcessor, and score. An echo model that returns the right option's picture must score
100 %, one that returns a wrong option's picture 0 %: a picture is most similar to itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from PIL import Image

from mmbatch.cli import main
from mmbatch.journal import committed_rows as read_progress
from mmbatch.tableio import read_table
from tests.conftest import REPO_ROOT
from tests.support.seed_level3 import write_level3_benchmark
from tests.support.tiny_clip import tiny_clip


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, shared_data) -> Path:
    folder = tmp_path_factory.mktemp("level3")
    source = write_level3_benchmark(folder / "media", shared_data, copies=2)
    out = folder / "prepared.parquet"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(source), "--output", str(out)]) == 0
    return out


def metrics(path: Path) -> dict[tuple[str, str, str], float]:
    return {(r["level"], r["group"], r["metric"]): r["value"] for r in json.loads(path.read_text())}


def run_chain(prepared: Path, folder: Path, echo_mode: str) -> dict[tuple[str, str, str], float]:
    preds, extracted, scores = folder / "preds.parquet", folder / "extracted.parquet", folder / "metrics.json"
    assert main(["infer", "--input", str(prepared), "--output", str(preds), "--backend", "echo",
                 "--model", echo_mode]) == 0
    assert main(["extract", "--input", str(preds), "--output", str(extracted), "--no-judge",
                 "--clip-model", str(tiny_clip()), "--clip-batch-size", "3",
                 "--media-root", str(prepared.parent)]) == 0  # the option pictures lie outside the predictions' folder
    assert main(["score", "--input", str(extracted), "--output", str(scores), "--bootstrap", "20"]) == 0
    rows = read_table(extracted).frame
    assert rows["extract_method"].to_list() == ["clip"] * rows.height
    assert all(len(similarities) == 4 for similarities in rows["choice_similarities"].to_list())
    assert read_table(extracted).metadata["extract"]["clip"]["model"] == str(tiny_clip())
    return metrics(scores)


def test_right_picture_scores_100_and_wrong_picture_0(prepared, tmp_path):
    right = run_chain(prepared, tmp_path / "right", "answer")
    for group in ("Text-to-Image Generation", "Next Image Prediction", "Text-Image Creation"):
        assert right[("dimension", group, "acc")] == 100.0
    assert right[("part", "Image Generation", "acc")] == 100.0
    assert right[("part", "Image & Text Generation", "acc")] == 100.0
    assert right[("level", "L3", "acc")] == 100.0
    extracted = read_table(tmp_path / "right" / "extracted.parquet").frame
    for row in extracted.iter_rows(named=True):  # the chosen option is the picture itself: similarity 1
        assert row["choice_similarities"][ord(row["answer"]) - ord("A")] == pytest.approx(1.0, abs=1e-5)

    wrong = run_chain(prepared, tmp_path / "wrong", "letter:D")  # D is never the answer of these questions
    assert wrong[("level", "L3", "acc")] == 0.0
    assert wrong[("overall", "Overall", "acc")] == 0.0


def test_generated_pictures_sit_beside_the_predictions_and_survive_shards_and_merge(prepared, tmp_path):
    preds = tmp_path / "preds.parquet"
    for shard in ("0/2", "1/2"):
        assert main(["infer", "--input", str(prepared), "--output", str(preds), "--backend", "echo",
                     "--model", "answer", "--shard", shard]) == 0
    merged = tmp_path / "elsewhere" / "merged.parquet"  # another folder: merge rewrites the relative paths
    assert main(["merge", "--output", str(merged), str(tmp_path / "preds.shard-0-of-2.parquet"),
                 str(tmp_path / "preds.shard-1-of-2.parquet")]) == 0
    rows = read_table(merged).frame
    assert rows.height == 6 and rows["error"].null_count() == 6
    assert all(name.startswith("../preds.images/") for name in rows["generated_image"])
    media = prepared.parent / "media"
    for row in rows.iter_rows(named=True):
        generated = (merged.parent / row["generated_image"]).resolve()
        assert generated.suffix == ".png" and generated.parent.name == "preds.images"
        right = media / json.loads(row["option_image_paths"])[ord(row["answer"]) - ord("A")]
        assert np.array_equal(np.asarray(Image.open(generated)), np.asarray(Image.open(right).convert("RGB")))


def test_a_text_model_fails_only_the_picture_rows_of_a_mixed_file(tmp_path_factory, tmp_path):
    from tests.support.tiny_models import session_model_dir

    examples = REPO_ROOT / "examples" / "seed"
    prepared, preds = tmp_path / "prepared.parquet", tmp_path / "preds.parquet"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(examples / "seed2_example.json"),
                 "--media-root", str(examples / "media"), "--output", str(prepared)]) == 0
    code = main(["infer", "--input", str(prepared), "--output", str(preds), "--backend", "hf", "--model",
                 str(session_model_dir(tmp_path_factory, "llava")), "--device", "cpu", "--max-new-tokens", "2",
                 "--num-frames", "2", "--media-root", str(examples)])  # the media lie outside prepared.parent
    assert code == 3
    rows = read_table(preds).frame
    failed = rows.filter(pl.col("error").is_not_null())
    assert failed["question_type_id"].to_list() == [25]
    assert "cannot generate images" in failed["error"][0]


def test_kill_9_during_image_generation_loses_no_picture_and_repeats_no_row(tmp_path, shared_data):
    source = write_level3_benchmark(tmp_path / "media", shared_data, copies=8)
    prepared, preds = tmp_path / "prepared.parquet", tmp_path / "preds.parquet"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(source), "--output", str(prepared)]) == 0
    progress = tmp_path / "preds.parquet.partial"
    args = [sys.executable, "-m", "mmbatch", "infer", "--input", str(prepared), "--output", str(preds),
            "--backend", "echo", "--model", "answer"]
    env = {**os.environ, "MMBATCH_ECHO_DELAY_S": "0.15"}
    process = subprocess.Popen(args, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while committed(progress) < 4 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done = committed_rows(progress)
    assert 4 <= len(done) < 24, "the run must be killed in the middle of image generation"
    before = {index: (tmp_path / "preds.images" / f"{index}.png").stat().st_mtime_ns for index in done}

    rerun = subprocess.run(args, cwd=REPO_ROOT, env={**os.environ}, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(done)} already done, {24 - len(done)} to run" in rerun.stderr
    rows = read_table(preds).frame
    assert rows.height == 24 and rows["error"].null_count() == 24
    assert all((tmp_path / name).is_file() for name in rows["generated_image"])
    after = {index: (tmp_path / "preds.images" / f"{index}.png").stat().st_mtime_ns for index in done}
    assert after == before  # finished rows were not generated again


def committed_rows(progress: Path) -> set[int]:
    rows = read_progress(progress)
    if rows is None:
        return set()
    return set(rows.filter(pl.col("error").is_null())["index"].to_list())


def committed(progress: Path) -> int:
    return len(committed_rows(progress))


def test_a_clip_model_that_cannot_load_is_exit_2(prepared, tmp_path, capsys):
    preds = tmp_path / "preds.parquet"
    assert main(["infer", "--input", str(prepared), "--output", str(preds), "--backend", "echo",
                 "--model", "answer"]) == 0
    code = main(["extract", "--input", str(preds), "--output", str(tmp_path / "x.parquet"), "--no-judge",
                 "--clip-model", str(tmp_path / "no-such-clip"), "--media-root", str(prepared.parent)])
    assert code == 2
    assert "--clip-model" in capsys.readouterr().err


def test_an_unreadable_picture_fails_only_its_row(prepared, tmp_path):
    preds, extracted = tmp_path / "preds.parquet", tmp_path / "extracted.parquet"
    assert main(["infer", "--input", str(prepared), "--output", str(preds), "--backend", "echo",
                 "--model", "answer"]) == 0
    (tmp_path / "preds.images" / "1.png").write_bytes(b"not a png")
    code = main(["extract", "--input", str(preds), "--output", str(extracted), "--no-judge",
                 "--clip-model", str(tiny_clip()), "--clip-batch-size", "3", "--media-root", str(prepared.parent)])
    assert code == 3
    rows = read_table(extracted).frame.sort("index")
    assert rows["extract_method"].to_list() == ["clip", "error", "clip", "clip", "clip", "clip"]
    assert "1.png" in rows["error"][1] or "identify" in rows["error"][1]
    assert rows.filter(pl.col("extract_method") == "clip")["extracted"].to_list() == \
        rows.filter(pl.col("extract_method") == "clip")["answer"].to_list()


def test_a_backend_without_pictures_is_refused_for_a_file_of_picture_rows(prepared, tmp_path, capsys):
    code = main(["infer", "--input", str(prepared), "--output", str(tmp_path / "p.parquet"), "--backend", "vllm",
                 "--model", str(tmp_path / "no-model")])
    assert code == 2  # before any engine starts: vllm need not even be installed
    message = capsys.readouterr().err
    assert "generate-image" in message and "vllm" in message
