"""--backend diffusers: a tiny random Stable Diffusion pipeline, loaded by DiffusionPipeline.from_pretrained, answers
the level-3 rows through the CLI; its pictures go through CLIP extraction and score like any model's."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from mmbatch.cli import main
from mmbatch.tableio import read_table
from tests.support.seed_level3 import write_level3_benchmark
from tests.support.tiny_clip import tiny_clip

pytest.importorskip("diffusers", reason="the diffusers extra is installed by `make test`")
from tests.support.tiny_diffusion import tiny_stable_diffusion


@pytest.mark.slow
def test_diffusers_pictures_are_extracted_and_scored(tmp_path, shared_data):
    source = write_level3_benchmark(tmp_path / "media", shared_data)
    prepared, preds = tmp_path / "prepared.parquet", tmp_path / "preds.parquet"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(source), "--output", str(prepared)]) == 0
    infer = ["infer", "--input", str(prepared), "--output", str(preds), "--backend", "diffusers",
             "--model", str(tiny_stable_diffusion()), "--image-steps", "2", "--image-size", "32x32", "--device", "cpu"]
    assert main([*infer, "--batch-size", "3"]) == 0
    table = read_table(preds)
    assert table.metadata["infer"]["backend_settings"]["pipeline"] == "StableDiffusionPipeline"
    pictures = [np.asarray(Image.open(tmp_path / name)) for name in table.frame["generated_image"]]
    assert [p.shape for p in pictures] == [(32, 32, 3)] * 3
    assert not np.array_equal(pictures[0], pictures[1])  # each row has its own prompt and noise

    # a row's picture depends only on its prompt and index, not on the batch it ran in
    single = tmp_path / "single.parquet"
    assert main([*infer[:4], str(single), *infer[5:], "--batch-size", "1"]) == 0
    again = [np.asarray(Image.open(tmp_path / name)) for name in read_table(single).frame["generated_image"]]
    assert all(np.abs(a.astype(int) - b.astype(int)).max() <= 1 for a, b in zip(pictures, again, strict=True))

    extracted, scores = tmp_path / "extracted.parquet", tmp_path / "metrics.json"
    assert main(["extract", "--input", str(preds), "--output", str(extracted), "--no-judge",
                 "--clip-model", str(tiny_clip())]) == 0
    assert read_table(extracted).frame["extract_method"].to_list() == ["clip"] * 3
    assert main(["score", "--input", str(extracted), "--output", str(scores)]) == 0
    levels = {(r["level"], r["group"]) for r in json.loads(scores.read_text()) if r["metric"] == "acc"}
    assert ("level", "L3") in levels and ("part", "Image & Text Generation") in levels


def test_diffusers_refuses_text_rows(tmp_path):
    from tests.support.prepared_files import prepared_frame, write_prepared

    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(1, copies=1))
    code = main(["infer", "--input", str(prepared), "--output", str(tmp_path / "p.parquet"), "--backend",
                 "diffusers", "--model", str(tiny_stable_diffusion()), "--image-steps", "1"])
    assert code == 3
    assert read_table(tmp_path / "p.parquet").frame["error"].to_list() == [
        "the diffusers backend only answers generate-image rows"]
