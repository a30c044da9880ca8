"""Every option also reads MMBATCH_<OPTION>; the command line wins."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from mmbatch.cli import main
from mmbatch.errors import BadInputError
from mmbatch.options import apply_environment_defaults, environment_variable


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", required=True)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--no-judge", action="store_true")
    parser.add_argument("--circular", action=argparse.BooleanOptionalAction, default=None)
    return parser


def test_environment_variable_names() -> None:
    assert environment_variable("--max-new-tokens") == "MMBATCH_MAX_NEW_TOKENS"


def test_environment_fills_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMBATCH_INPUT", "in.tsv")
    monkeypatch.setenv("MMBATCH_BATCH_SIZE", "16")
    monkeypatch.setenv("MMBATCH_NO_JUDGE", "true")
    monkeypatch.setenv("MMBATCH_CIRCULAR", "0")
    parser = _parser()
    apply_environment_defaults(parser)
    args = parser.parse_args([])
    assert (args.input, args.batch_size, args.no_judge, args.circular) == ("in.tsv", 16, True, False)
    assert parser.parse_args(["--batch-size", "2", "--circular"]).batch_size == 2


def test_bad_boolean_in_environment_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMBATCH_NO_JUDGE", "perhaps")
    with pytest.raises(BadInputError, match="MMBATCH_NO_JUDGE='perhaps' is not a boolean"):
        apply_environment_defaults(_parser())


@pytest.mark.parametrize(("variable", "value", "reason"), [
    ("MMBATCH_BATCH_SIZE", "abc", "MMBATCH_BATCH_SIZE='abc' is not a valid --batch-size (expected positive_int)"),
    ("MMBATCH_BATCH_SIZE", "0", "MMBATCH_BATCH_SIZE='0' is not a valid --batch-size (0 is not a positive integer)"),
    ("MMBATCH_DTYPE", "fp8", "MMBATCH_DTYPE='fp8' is not a valid --dtype (choose from auto, bfloat16, float16, "
     "float32)"),
])
def test_bad_variable_is_named_without_the_usage(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                 variable: str, value: str, reason: str) -> None:
    monkeypatch.setenv(variable, value)
    assert main(["infer", "--input", "in.parquet", "--output", "out.parquet", "--backend", "echo",
                 "--model", "answer"]) == 2
    err = capsys.readouterr().err
    assert reason in err
    assert "usage:" not in err


def test_a_variable_of_another_command_does_not_matter(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MMBATCH_BATCH_SIZE", "abc")  # an infer option: validate does not read it
    assert main(["validate", str(tmp_path / "missing.tsv")]) == 2  # the file's error, not the variable's


def test_unknown_variable_warns_with_the_closest_option(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MMBATCH_NOJUDGE", "1")
    monkeypatch.setenv("MMBATCH_NUM_SHARDS", "2")  # known: read by --shard's fallback, not an option
    with pytest.raises(SystemExit):
        main(["--version"])
    err = capsys.readouterr().err
    assert "MMBATCH_NOJUDGE is set but no mmbatch option reads it, so it is ignored; did you mean MMBATCH_NO_JUDGE?" \
        in err
    assert "MMBATCH_NUM_SHARDS" not in err


def test_cli_reads_environment(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    result = cli("validate", env={"MMBATCH_STAGE": "scores"})
    assert result.returncode == 2 and "FILE" in result.stderr  # positional arguments have no variable
