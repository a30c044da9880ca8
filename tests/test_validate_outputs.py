"""`mmbatch validate` checks every file the stages write: score's metrics table in each of its formats (``.json``
is the default) and its rows (hits) file, including the files of an extract run straight on a VLMEvalKit xlsx."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmbatch.cli import main


@pytest.fixture(scope="module")
def scored(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """extract + score of VLMEvalKit's VILA-8B CCBench file, as VLMEvalKit wrote it (no prompt columns)."""
    out = tmp_path_factory.mktemp("scored")
    source = shared_data / "vlmevalkit_vila" / "vila_8b" / "vila_8b_CCBench.xlsx"
    assert main(["extract", "--input", str(source), "--output", str(out / "extracted.parquet"),
                 "--benchmark", "mmbench", "--no-judge"]) == 0
    for name in ("metrics.json", "metrics.tsv"):
        assert main(["score", "--input", str(out / "extracted.parquet"), "--output", str(out / name)]) == 0
    return out


@pytest.mark.parametrize("name", ["extracted.parquet", "metrics.json", "metrics.tsv", "metrics.hits.parquet"])
def test_every_output_of_extract_and_score_validates(scored: Path, name: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(scored / name)]) == 0
    stage = {"extracted": "extracted", "metrics": "scores", "metrics.hits": "hits"}[name.rsplit(".", 1)[0]]
    assert f"valid {stage} file" in capsys.readouterr().out


def test_a_broken_json_metrics_table_names_row_and_column(scored: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    rows = json.loads((scored / "metrics.json").read_text())
    del rows[0]["metric"]
    rows[3]["n"] = "many"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(rows))
    assert main(["validate", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "column 'metric': empty value in a required column (rows index=#0)" in err
    assert "column 'n': not a valid int64 value (rows index=#3)" in err
    broken.write_text('{"metric": "acc"}')
    assert main(["validate", str(broken)]) == 2
    assert "not a JSON metrics file" in capsys.readouterr().err
