"""``mmbatch infer --backend hf`` end to end with a tiny random-weight LLaVA built offline (real loading path).

One prepared file mixes every kind of row (generated answers, likelihood ranking with 4 and 3 options, a video, a
broken video), so the slow part, loading torch and the model in a subprocess, happens only twice.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.tableio import read_metadata, read_table
from tests.conftest import EXAMPLES, run_cli
from tests.support.prepared_files import prepared_frame, write_prepared
from tests.support.tiny_models import session_model_dir
from tests.test_video import make_video


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_model_dir(tmp_path_factory, "llava")


def hf_infer(model: Path, prepared: Path, output: Path, *extra: str):
    return run_cli("infer", "--input", str(prepared), "--output", str(output), "--backend", "hf", "--model",
                   str(model), "--device", "cpu", "--dtype", "float32", "--max-new-tokens", "6", *extra)


def mixed_rows(folder: Path) -> pl.DataFrame:
    make_video(folder / "clip.mp4", frames=12, fps=6)
    (folder / "broken.mp4").write_bytes(b"not a video")
    frame = prepared_frame(6, copies=1).with_columns(
        pl.Series("mode", ["generate", "generate", "likelihood", "likelihood", "generate", "generate"]),
        pl.Series("video_path", [None, None, None, None, "clip.mp4", "broken.mp4"], dtype=pl.String),
    )
    return frame.with_columns(
        pl.when(pl.col("index") >= 5).then(None).otherwise(pl.col("image")).alias("image"),
        pl.when(pl.col("index") == 4).then(None).otherwise(pl.col("D")).alias("D"),
        pl.when(pl.col("index") == 4).then(pl.lit("A")).otherwise(pl.col("answer")).alias("answer"),
    )


@pytest.mark.slow
def test_every_kind_of_row_through_a_tiny_llava_and_resume(tiny_llava: Path, tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prep.parquet", mixed_rows(tmp_path))
    output = tmp_path / "preds.parquet"
    first = hf_infer(tiny_llava, prepared, output, "--batch-size", "2", "--num-frames", "2")
    assert first.returncode == 3, first.stderr
    out = read_table(output).frame
    by_index = {row["index"]: row for row in out.iter_rows(named=True)}
    for index in (1, 2, 5):  # generated: text, tokens, no scores
        assert by_index[index]["error"] is None and by_index[index]["prediction"] is not None
        assert by_index[index]["output_tokens"] >= 1 and by_index[index]["choice_logprobs"] is None
    assert [len(by_index[i]["choice_logprobs"]) for i in (3, 4)] == [4, 3]
    assert all(lp < 0 for i in (3, 4) for lp in by_index[i]["choice_logprobs"])
    assert all(n >= 1 for i in (3, 4) for n in by_index[i]["choice_ntokens"])
    assert by_index[3]["prediction"] is None
    assert by_index[6]["error"].startswith("column 'video_path': not a readable video")
    meta = read_metadata(output)["infer"]
    assert meta["backend"] == "hf" and meta["dtype"] == "float32" and meta["backend_settings"]
    assert run_cli("validate", str(output)).returncode == 0

    # Batch size may change on a rerun; only the failed row runs again (and fails again).
    again = hf_infer(tiny_llava, prepared, output, "--batch-size", "1", "--num-frames", "2")
    assert again.returncode == 3 and "5 already done, 1 to run" in again.stderr
    assert read_table(output).frame.drop("latency_ms").equals(out.drop("latency_ms"))


def test_group_prefix_sharing_is_counted_in_the_output_metadata(tiny_llava: Path, tmp_path: Path) -> None:
    """Circular copies (one g_index, one image) share their prefix; the predictions file records how many rows did
    and why the others did not, as the log line says."""
    from mmbatch.cli import main

    prepared, output = tmp_path / "prepared.parquet", tmp_path / "predictions.parquet"
    source = EXAMPLES / "mmbench" / "mmbench_example.tsv"
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(source), "--output", str(prepared),
                 "--limit", "3"]) == 0
    assert main(["infer", "--input", str(prepared), "--output", str(output), "--backend", "hf", "--model",
                 str(tiny_llava), "--device", "cpu", "--dtype", "float32", "--max-new-tokens", "2"]) == 0
    rows = read_table(prepared).frame
    counts = read_metadata(output)["infer"]["row_counts"]["prefix_sharing"]["generated"]
    assert counts["shared_rows"] + sum(counts["unshared"].values()) == rows.height
    assert counts["shared_rows"] > 0 and counts["groups"] == rows.filter(
        pl.col("g_index").is_duplicated())["g_index"].n_unique()
