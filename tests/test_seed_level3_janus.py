"""--backend hf draws level-3 pictures with a tiny random Janus loaded by AutoProcessor/AutoModelForImageTextToText
(its processor's image-generation mode); the pictures go through CLIP extraction and score."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from mmbatch.cli import main
from mmbatch.tableio import read_table
from tests.support.seed_level3 import write_level3_benchmark
from tests.support.tiny_clip import tiny_clip
from tests.support.tiny_janus import tiny_janus


@pytest.mark.slow
def test_janus_pictures_are_extracted_and_scored(tmp_path, shared_data):
    source = write_level3_benchmark(tmp_path / "media", shared_data)
    prepared, preds = tmp_path / "prepared.parquet", tmp_path / "preds.parquet"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(source), "--output", str(prepared)]) == 0
    assert main(["infer", "--input", str(prepared), "--output", str(preds), "--backend", "hf",
                 "--model", str(tiny_janus()), "--device", "cpu", "--dtype", "float32"]) == 0
    table = read_table(preds)
    settings = table.metadata["infer"]["backend_settings"]
    assert settings["architecture"] == "JanusForConditionalGeneration"
    assert settings["image_generation"]["rows_per_call"] == 1
    pictures = [np.asarray(Image.open(tmp_path / name)) for name in table.frame["generated_image"]]
    assert [p.shape for p in pictures] == [(16, 16, 3)] * 3
    assert table.frame["output_tokens"].to_list() == [16] * 3  # one picture = the model's 4x4 image tokens

    extracted, scores = tmp_path / "extracted.parquet", tmp_path / "metrics.json"
    assert main(["extract", "--input", str(preds), "--output", str(extracted), "--no-judge",
                 "--clip-model", str(tiny_clip())]) == 0
    assert read_table(extracted).frame["extract_method"].to_list() == ["clip"] * 3
    assert main(["score", "--input", str(extracted), "--output", str(scores)]) == 0
    assert any(r["level"] == "level" and r["group"] == "L3" for r in json.loads(scores.read_text()))
