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
    ["extract", "--input", "p.parquet", "--output", "o.parquet", "--retry-backoff", "nan"],
    ["extract", "--input", "p.parquet", "--output", "o.parquet", "--retry-backoff", "-1"],
    ["infer", "--input", "p.parquet", "--output", "o.parquet", "--backend", "echo", "--model", "answer",
     "--temperature", "nan"],
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


def test_emoji_codes_in_paths_print_as_they_are(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # rich reads ":x:" in a plain string as an emoji code whether markup is on or off: prepare's summary printed
    # "run:x:2.parquet" as "run\u274c2.parquet", and score's table and messages did the same
    from tests.conftest import EXAMPLES

    prepared, predictions = tmp_path / "run:x:2.parquet", tmp_path / "o:thumbs_up:.parquet"
    extracted, metrics = tmp_path / "e.parquet", tmp_path / "m:100:.json"
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(EXAMPLES / "mmbench" / "mmbench_example.tsv"),
                 "--output", str(prepared)]) == 0
    assert "run:x:2.parquet" in capsys.readouterr().out
    assert main(["infer", "--input", str(prepared), "--output", str(predictions), "--backend", "echo", "--model",
                 "fixed:A"]) == 0
    assert main(["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge"]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(metrics)]) == 0
    printed = capsys.readouterr()
    assert "o:thumbs_up:.parquet" in printed.out + printed.err
    assert "m:100:.json" in printed.err and "m:100:.hits.parquet" in printed.err


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


def test_a_tsv_with_too_many_columns_is_refused_naming_the_limit(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    wide = tmp_path / "wide.tsv"
    wide.write_text("\t".join(f"c{i}" for i in range(10_001)) + "\n" + "\t".join("x" * 10_001) + "\n")
    assert main(["validate", str(wide)]) == 2
    assert "MAX_COLUMNS" in capsys.readouterr().err


def test_an_xlsx_zip_bomb_is_refused_before_it_is_unpacked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import zipfile

    import mmbatch.xlsx_limits as xlsx_limits

    monkeypatch.setattr(xlsx_limits, "MAX_XLSX_UNPACKED_BYTES", 1 << 20)  # the real limit is 1 GiB
    bomb = tmp_path / "preds.xlsx"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", b"\0" * (8 << 20))
    assert bomb.stat().st_size < 100_000
    assert main(["extract", "--input", str(bomb), "--output", str(tmp_path / "out.tsv"), "--benchmark", "mmbench",
                 "--no-judge"]) == 2
    assert "MAX_XLSX_UNPACKED_BYTES" in capsys.readouterr().err


def test_an_mme_tool_file_linked_to_dev_zero_is_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "Your_Results"
    folder.mkdir()
    (folder / "count.txt").symlink_to("/dev/zero")
    assert main(["import", "--format", "mme-eval-tool", "--input", str(folder), "--output",
                 str(tmp_path / "p.parquet")]) == 2
    assert "MAX_TOOL_FILE_BYTES" in capsys.readouterr().err


def test_a_file_with_no_rows_is_not_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "extracted.tsv"
    empty.write_text("index\tquestion\tA\tB\tanswer\tprediction\textracted\n", encoding="utf-8")
    assert main(["score", "--input", str(empty), "--output", str(tmp_path / "m.json"), "--benchmark", "mmbench"]) == 2
    assert "no rows" in capsys.readouterr().err and not (tmp_path / "m.json").exists()


def test_brackets_in_paths_model_names_and_image_names_are_plain_text(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # Campaign replay, beyond the error line: a path under a folder "a[" named "a[/]..." crashed score's table with a
    # MarkupError, a model "[/]x" crashed the progress line, an MME image "[/]img" crashed score's warning, and polars
    # read "p[12].tsv" as a glob (unreadable, or worse, the file p1.tsv).
    import polars as pl

    from mmbatch.progress import ProgressBar
    from mmbatch.tableio import read_table
    from tests.conftest import EXAMPLES

    folder = tmp_path / "a["
    folder.mkdir()
    source = tmp_path / "a[" / "]in[12].tsv"  # the path reads "a[/]in[12].tsv"
    source.write_bytes((EXAMPLES / "mmbench" / "mmbench_example.tsv").read_bytes())
    (tmp_path / "a[" / "]in1.tsv").write_text("index\tquestion\n1\tdecoy\n", encoding="utf-8")  # what the glob matched
    prepared, predictions, extracted = (folder / f"]{name}[red].parquet" for name in ("p", "o", "e"))
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(source), "--output", str(prepared)]) == 0
    assert read_table(prepared).frame.height == 87
    assert main(["infer", "--input", str(prepared), "--output", str(predictions), "--backend", "echo", "--model",
                 "fixed:[/]x"]) == 0
    assert main(["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge"]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(folder / "]m[red].json")]) == 0
    assert "a[/]m[red].json" in capsys.readouterr().err

    ProgressBar("infer [/]x [bold]", 2, "rows", log_interval_s=0).advance()
    assert "infer [/]x [bold]: 1/2" in capsys.readouterr().err

    mme = tmp_path / "mme.tsv"
    mme.write_text("index\tcategory\timage_name\tanswer\tprediction\textracted\n"
                   + "".join(f"{i}\tcount\t[/]img\tYes\tYes\tYes\n" for i in range(3)), encoding="utf-8")
    assert main(["score", "--input", str(mme), "--output", str(tmp_path / "mme.json"), "--benchmark", "mme"]) == 0
    assert "[/]img (3 questions)" in capsys.readouterr().err
    assert pl.read_json(tmp_path / "mme.json").height > 0
