"""Values that used to be accepted or to crash: negative timeouts, retries and seeds, messages that look like markup."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmbatch.cli import main


@pytest.mark.parametrize("args", [
    ["infer", "--input", "p.parquet", "--output", "o.parquet", "--backend", "openai", "--model", "m",
     "--timeout", "-1"],
    ["infer", "--input", "p.parquet", "--output", "o.parquet", "--backend", "openai", "--model", "m",
     "--max-retries", "-1"],
    ["extract", "--input", "p.parquet", "--output", "o.parquet", "--timeout", "nan"],
    ["score", "--input", "e.parquet", "--output", "m.json", "--seed", "-1"],
])
def test_out_of_range_values_are_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_message_holding_markup_prints_as_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("[/].tsv", "[bold]x.tsv"):
        assert main(["validate", str(tmp_path / name)]) == 2
        assert name in capsys.readouterr().err


def test_a_negative_index_is_its_own_circular_group() -> None:
    import polars as pl

    from mmbatch.row_facts import group_index

    frame = pl.DataFrame({"index": [-5, 999_995, 1_999_995, 7]})
    groups = frame.select(group_index(frame.columns, "circular-offset"))["g_index"].to_list()
    assert groups == [-5, 999_995, 999_995, 7]


@pytest.mark.parametrize("url", ["localhost:8000/v1", "http://[::1/v1", "http://host:99999/v1", "http:// x/v1"])
def test_a_malformed_judge_url_is_exit_2(url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    predictions = tmp_path / "pred.tsv"
    predictions.write_text("index\tquestion\tA\tB\tanswer\tprediction\n1\tWhich?\tcat\tdog\tA\tno idea\n", "utf-8")
    code = main(["extract", "--input", str(predictions), "--output", str(tmp_path / "out.tsv"), "--benchmark",
                 "mmbench", "--judge-base-url", url])
    assert code == 2 and "malformed" in capsys.readouterr().err
