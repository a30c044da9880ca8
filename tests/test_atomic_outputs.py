"""Multi-file outputs are atomic as a set: a TSV and its sidecar, and an export folder.

Replays of the campaign: a SIGTERM between the sidecar's rename and the TSV's left the old 10-row TSV beside a new
sidecar claiming 200,000 rows, which ``validate`` called valid; an MME tool export into a folder holding another
model's files left that model's subtask files beside the new ones, for the official tool to score as one.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.errors import BadInputError
from mmbatch.tableio import metadata_sidecar, read_table, write_table
from tests.conftest import REPO_ROOT

WRITER = """
import sys
import polars as pl
from mmbatch.tableio import write_table
out = sys.argv[1]
for generation in range(1, 1000):
    rows = 10 if generation % 2 else 60_000
    frame = pl.DataFrame({"index": range(rows), "question": [f"g{generation}"] * rows})
    write_table(frame, out, {"generation": generation, "rows": rows})
    print(generation, flush=True)
"""


def test_a_killed_tsv_write_never_pairs_a_file_with_another_sidecar(tmp_path: Path) -> None:
    out = tmp_path / "table.tsv"
    rng = random.Random(16)
    for _ in range(4):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(out)], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                                  env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        assert writer.stdout is not None
        writer.stdout.readline()  # one pair written: now kill it at a random moment of the next ones
        time.sleep(rng.uniform(0.0, 0.4))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        table = read_table(out)
        if table.metadata:  # a pair: the sidecar must be the file's own
            assert table.metadata["rows"] == table.frame.height
            assert table.frame["question"][0] == f"g{table.metadata['generation']}"
        else:  # killed between the renames: the file has no metadata, so nothing resumes from it
            assert not metadata_sidecar(out).exists()


def test_a_sidecar_of_another_version_of_the_file_is_refused(tmp_path: Path) -> None:
    out = write_table(pl.DataFrame({"index": [1, 2]}), tmp_path / "t.tsv", {"rows": 2})
    assert read_table(out).metadata["rows"] == 2
    out.write_text("index\n1\n2\n3\n", encoding="utf-8")  # the file replaced, its sidecar kept
    with pytest.raises(BadInputError, match="another version of the file"):
        read_table(out)
    assert main(["validate", str(out)]) == 2


def test_an_mme_export_replaces_the_folder_as_a_whole(tmp_path: Path) -> None:
    predictions = write_table(pl.DataFrame({
        "index": [0, 1], "g_index": [0, 0], "benchmark": ["mme", "mme"], "question": ["q1", "q2"],
        "answer": ["Yes", "No"], "category": ["count", "count"], "image_name": ["a.jpg", "a.jpg"],
        "prompt": ["q1", "q2"], "prompt_template": ["mme", "mme"], "mode": ["generate", "generate"],
        "prediction": ["Yes", "No"], "model": ["m", "m"],
    }), tmp_path / "mme.predictions.tsv")
    folder = tmp_path / "Your_Results"
    folder.mkdir()
    (folder / "count.txt").write_text("old model\n")
    (folder / "OCR.txt").write_text("old model\n")  # a subtask the new export does not have
    assert main(["export", "--format", "mme-eval-tool", "--input", str(predictions), "--output", str(folder)]) == 0
    assert sorted(path.name for path in folder.iterdir()) == ["count.txt"]
    assert "old model" not in (folder / "count.txt").read_text()

    (folder / "notes.md").write_text("mine")  # not an export's file: refused, nothing touched
    assert main(["export", "--format", "mme-eval-tool", "--input", str(predictions), "--output", str(folder)]) == 2
    assert (folder / "notes.md").read_text() == "mine" and (folder / "count.txt").is_file()
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".")]  # no staging folder left


def test_metadata_of_the_wrong_shape_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = write_table(pl.DataFrame({"index": [1]}), tmp_path / "t.tsv", {})
    metadata_sidecar(out).write_text(json.dumps(["not", "an", "object"]))
    assert main(["validate", str(out)]) == 2
    metadata_sidecar(out).write_text(json.dumps({"prepare": 5}))
    assert main(["score", "--input", str(out), "--output", str(tmp_path / "m.json")]) == 2
    assert "'prepare' holds a int" in capsys.readouterr().err


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'{"infer": "fast"}', b'{"prepare": {"x": ' + b"[" * 5000
                                 + b"]" * 5000 + b"}}", b"\xff\xfe"],
                         ids=["not-json", "array", "section-not-object", "nested-too-deep", "not-utf8"])
@pytest.mark.parametrize("command", ["validate", "infer", "extract", "score"])
def test_parquet_metadata_of_the_wrong_shape_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              raw: bytes, command: str) -> None:
    # Campaign replay: invalid or wrongly typed mmbatch metadata in a Parquet file crashed every stage.
    import pyarrow.parquet as pq

    from tests.support.prepared_files import prepared_frame

    table = prepared_frame(1).with_columns(pl.lit("A").alias("prediction"), pl.lit("A").alias("extracted")).to_arrow()
    path = tmp_path / "bad.parquet"
    pq.write_table(table.replace_schema_metadata({b"mmbatch": raw}), path)  # as another tool would write it
    args = {"validate": ["validate", str(path)],
            "infer": ["infer", "--input", str(path), "--output", str(tmp_path / "o.parquet"), "--backend", "echo",
                      "--model", "answer"],
            "extract": ["extract", "--input", str(path), "--output", str(tmp_path / "o.parquet"), "--no-judge"],
            "score": ["score", "--input", str(path), "--output", str(tmp_path / "m.json")]}[command]
    assert main(args) == 2
    error = capsys.readouterr().err
    assert "mmbatch metadata" in error or "not a readable Parquet file" in error  # polars refuses non-UTF-8 itself
