"""--backend openai answers level-3 rows through the images API of a real server on 127.0.0.1: generations for text
rows, edits (multipart, with the input frames) for dimension 26; a 500 is retried; the pictures score through CLIP."""

from __future__ import annotations

import io
import json

import numpy as np
from PIL import Image

from mmbatch.cli import main
from mmbatch.tableio import read_table
from tests.support.images_server import ImagesServer
from tests.support.seed_level3 import write_level3_benchmark
from tests.support.tiny_clip import tiny_clip


def test_images_api_pictures_are_stored_and_score_through_clip(tmp_path, shared_data):
    media = tmp_path / "media"
    source = write_level3_benchmark(media, shared_data)
    prepared, preds = tmp_path / "prepared.parquet", tmp_path / "preds.parquet"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(source), "--output", str(prepared)]) == 0
    rows = read_table(prepared).frame
    # the server draws, for each prompt, that row's right option picture: a perfect image generator
    pictures = {}
    for row in rows.iter_rows(named=True):
        right = media / json.loads(row["option_image_paths"])[ord(row["answer"]) - ord("A")]
        buffer = io.BytesIO()
        Image.open(right).convert("RGB").save(buffer, format="PNG")
        pictures[row["prompt"]] = buffer.getvalue()

    with ImagesServer(pictures, fail_first=1) as server:
        assert main(["infer", "--input", str(prepared), "--output", str(preds), "--backend", "openai",
                     "--base-url", server.base_url, "--model", "image-model", "--image-size", "256x256",
                     "--concurrency", "2"], ) == 0
        calls = list(server.calls)
    assert len(calls) == 4  # three rows and one retry after the scripted 500
    by_path = {call.path: call for call in calls}
    edit = by_path["/v1/images/edits"]
    assert edit.fields["prompt"] == "What will happen next?" and len(edit.files) == 3  # the preceding frames
    assert edit.fields["size"] == "256x256" and edit.fields["model"] == "image-model"
    assert by_path["/v1/images/generations"].fields["response_format"] == "b64_json"

    for row in read_table(preds).frame.iter_rows(named=True):
        stored = np.asarray(Image.open(tmp_path / row["generated_image"]))
        assert np.array_equal(stored, np.asarray(Image.open(io.BytesIO(pictures[row["prompt"]]))))

    extracted, scores = tmp_path / "extracted.parquet", tmp_path / "metrics.json"
    assert main(["extract", "--input", str(preds), "--output", str(extracted), "--no-judge",
                 "--clip-model", str(tiny_clip())]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(scores)]) == 0
    values = {(r["level"], r["group"], r["metric"]): r["value"] for r in json.loads(scores.read_text())}
    assert values[("level", "L3", "acc")] == 100.0
