"""Every option also reads MMBATCH_<OPTION>; the command line wins."""

from __future__ import annotations

import argparse

import pytest

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
    with pytest.raises(SystemExit, match="not a boolean"):
        apply_environment_defaults(_parser())


def test_cli_reads_environment(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    result = cli("validate", env={"MMBATCH_STAGE": "scores"})
    assert result.returncode == 2 and "FILE" in result.stderr  # positional arguments have no variable
