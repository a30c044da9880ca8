"""`from mmbatch import prepare, infer, extract, score` runs the stages from Python with the CLI's option objects."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from mmbatch.cli import main
from mmbatch.tableio import read_metadata
from tests.conftest import EXAMPLES


def test_the_four_stages_run_from_python_and_match_the_cli(tmp_path: Path) -> None:
    importlib.import_module("mmbatch.infer.stage")  # the package imported first: the names still call the stages
    from mmbatch import ExtractOptions, InferOptions, PrepareOptions, ScoreOptions, extract, infer, prepare, score

    source = EXAMPLES / "mmbench" / "mmbench_example.tsv"
    prepared, predictions = tmp_path / "prepared.parquet", tmp_path / "predictions.parquet"
    extracted, metrics = tmp_path / "extracted.parquet", tmp_path / "metrics.json"
    summary = prepare(PrepareOptions(benchmark="mmbench", input=source, output=prepared))
    assert summary.rows == read_metadata(prepared)["prepare"]["rows"] > 0
    assert infer(InferOptions(input=prepared, output=predictions, backend="echo", model="letter:A")).exit_status == 0
    assert extract(ExtractOptions(input=predictions, output=extracted, use_judge=False)).exit_code == 0
    written = score(extracted, metrics, ScoreOptions(bootstrap=20))
    assert written.metrics == metrics and written.hits.is_file()

    cli = tmp_path / "cli.json"
    assert main(["score", "--input", str(extracted), "--output", str(cli), "--bootstrap", "20"]) == 0
    assert json.loads(cli.read_text()) == json.loads(metrics.read_text())
    overall = {row["metric"]: row["value"] for row in json.loads(metrics.read_text()) if row["group"] == "Overall"}
    assert 0 < overall["vanilla_acc"] < 100 and overall["circular_acc"] < overall["vanilla_acc"]
