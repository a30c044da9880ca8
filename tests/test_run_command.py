"""``mmbatch run``: the four stages in one go, with the stages' own options, resumable, exit 3 on failed rows."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from polars.testing import assert_frame_equal

from mmbatch.cli import build_parser
from mmbatch.pipeline import RUN_STAGES, STAGE_COMMANDS, RunFiles, stage_arguments, stage_parsers
from mmbatch.tableio import read_metadata, read_table
from tests.conftest import EXAMPLES, run_cli
from tests.support.openai_server import OpenAIServer, ServerScript, message_text, status

MME = ["--benchmark", "mme", "--input", str(EXAMPLES / "mme")]
ECHO = ["--backend", "echo", "--model", "answer"]


def clean(env: dict[str, str] | None = None) -> dict[str, str]:
    """The test environment without scheduler shard variables (run_cli merges ``env`` over os.environ)."""
    import os

    for key in ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "MMBATCH_NUM_SHARDS"):
        assert key not in os.environ, f"the test environment sets {key}"
    return env or {}


def metrics_of(path: Path) -> list[dict[str, Any]]:
    return sorted(json.loads(path.read_text()), key=lambda row: (row["level"], row["group"], row["metric"]))


def test_run_equals_the_four_stage_commands(tmp_path: Path) -> None:
    result = run_cli("run", *MME, *ECHO, "--no-judge", "--output-dir", str(tmp_path / "run"), env=clean())
    assert result.returncode == 0, result.stderr
    files = RunFiles(tmp_path / "run")
    checked = run_cli("validate", str(files.extracted))  # the stages check their own inputs as they read them
    assert checked.returncode == 0, checked.stderr

    alone = tmp_path / "alone"
    steps = [
        ["prepare", *MME, "--output", str(alone / "prepared.parquet")],
        ["infer", "--input", str(alone / "prepared.parquet"), "--output", str(alone / "predictions.parquet"), *ECHO],
        ["extract", "--input", str(alone / "predictions.parquet"), "--output", str(alone / "extracted.parquet"),
         "--no-judge"],
        ["score", "--input", str(alone / "extracted.parquet"), "--output", str(alone / "metrics.json")],
    ]
    for step in steps:
        done = run_cli(*step, env=clean())
        assert done.returncode == 0, done.stderr
    assert (alone / "prepared.parquet").read_bytes() == files.prepared.read_bytes()
    for name in ("predictions.parquet", "extracted.parquet"):
        assert_frame_equal(read_table(alone / name).frame.drop("latency_ms"),
                           read_table(files.folder / name).frame.drop("latency_ms"))
    assert metrics_of(alone / "metrics.json") == metrics_of(files.metrics)
    assert [line for line in result.stderr.splitlines() if line.startswith("== ")] == [f"== {s}" for s in RUN_STAGES]

    predictions = files.predictions.read_bytes()
    again = run_cli("run", *MME, *ECHO, "--no-judge", "--output-dir", str(files.folder), env=clean())
    assert again.returncode == 0, again.stderr
    assert re.search(r"(\d+) rows, \1 already done, 0 to run", again.stderr), "a rerun resumes, not recomputes"
    assert files.predictions.read_bytes() == predictions


def test_options_and_environment_reach_their_stage(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    result = run_cli("run", *MME, *ECHO, "--no-judge", "--output-dir", str(folder), "--limit", "2",
                     "--max-new-tokens", "7", "--yes-no-rule", "vlmevalkit", "--bootstrap", "20", "--seed", "3",
                     env=clean({"MMBATCH_BATCH_SIZE": "5"}))
    assert result.returncode == 0, result.stderr
    files = RunFiles(folder)
    assert read_table(files.prepared).frame.height == 2  # --limit 2 reaches prepare
    infer = read_metadata(files.predictions)["infer"]
    assert infer["max_new_tokens"] == 7 and infer["batch_size"] == 5
    assert read_metadata(files.extracted)["extract"]["yes_no_rule"] == "vlmevalkit"
    rows = json.loads(files.metrics.read_text())
    assert any(row["ci_low"] is not None for row in rows), "--bootstrap reaches score"


def test_shared_options_go_to_each_stage_and_unset_ones_keep_each_default() -> None:
    parsers = stage_parsers(with_environment=False)
    defaults = {stage: parsers[stage].get_default("timeout") for stage in ("infer", "extract")}
    assert defaults["infer"] != defaults["extract"], "the check below needs differing stage defaults"
    for argv, expected in ((["--timeout", "5"], {"infer": 5.0, "extract": 5.0}), ([], defaults)):
        given = build_parser().parse_args(["run", *MME, *ECHO, "--output-dir", "out", *argv])
        for stage in ("infer", "extract"):
            arguments = stage_arguments(parsers[stage], given, Path("in"), Path("out"))
            assert arguments.timeout == expected[stage]
            assert arguments.input == Path("in") and arguments.output == Path("out")
            options = STAGE_COMMANDS[stage].options(arguments)
            assert options.input == Path("in") and options.output == Path("out")


def test_a_single_run_refuses_a_shard_given_or_from_the_environment(tmp_path: Path) -> None:
    # --shard deals out a plan's units; one benchmark with one model runs the whole file.
    given = run_cli("run", *MME, *ECHO, "--no-judge", "--output-dir", str(tmp_path / "run"), "--shard", "0/2")
    assert given.returncode == 2 and "--shard applies to plans" in given.stderr
    result = run_cli("run", *MME, *ECHO, "--no-judge", "--output-dir", str(tmp_path / "run"),
                     env={"JOB_COMPLETION_INDEX": "1", "MMBATCH_NUM_SHARDS": "4"})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "shard 1/4" in result.stderr and "mmbatch merge" in result.stderr
    assert not (tmp_path / "run").exists()


def yes_no_answer(prompt: str, body: dict[str, Any]) -> str:
    """A server that answers MME questions: 'Yes' for the first image's questions, 'No' otherwise."""
    return "Yes" if "Is there" in message_text(body) else "No"


def test_failed_rows_exit_3_after_every_stage_and_a_rerun_retries_only_them(tmp_path: Path) -> None:
    """An OpenAI-compatible server (a real one on 127.0.0.1) fails one request; the chain still scores."""
    folder = tmp_path / "run"
    with OpenAIServer(ServerScript(reply=yes_no_answer, faults=[status(500)])) as server:
        argv = ["run", *MME, "--backend", "openai", "--base-url", server.base_url, "--model", "local-model",
                "--max-retries", "0", "--concurrency", "4", "--no-judge", "--limit", "3", "--output-dir", str(folder)]
        first = run_cli(*argv, env=clean({"OPENAI_API_KEY": "test-key"}))
        assert first.returncode == 3, first.stderr
        predictions = read_table(RunFiles(folder).predictions).frame
        assert predictions["error"].is_not_null().sum() == 1
        (failed_prompt,) = predictions.filter(predictions["error"].is_not_null())["prompt"].to_list()
        assert RunFiles(folder).metrics.is_file(), "score still runs when rows failed"
        failed_metric = [row for row in json.loads(RunFiles(folder).metrics.read_text()) if row["metric"] == "failed"]
        assert failed_metric and sum(row["value"] for row in failed_metric) >= 1
        requests_before = len(server.chat_requests)

        second = run_cli(*argv, env=clean({"OPENAI_API_KEY": "test-key"}))
        assert second.returncode == 0, second.stderr
        # Compared by prompt, not by count: a transport may resend a request on a dropped keep-alive connection.
        asked_again = {received.prompt for received in server.chat_requests[requests_before:]}
        assert asked_again == {failed_prompt}, f"only the failed row is asked again\n{second.stderr}"
    assert read_table(RunFiles(folder).predictions).frame["error"].is_null().all()


@pytest.mark.parametrize("stage", RUN_STAGES)
def test_every_stage_option_is_offered_by_run(stage: str) -> None:
    run_help = run_cli("run", "--help").stdout
    own = {name for option in stage_parsers(with_environment=False)[stage].declared for name in option.names}
    offered = {name for name in own if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", run_help)}
    assert own - offered <= {"--output", "--shard", "--input", "--model"}
    if stage == "prepare":
        assert "--input" in offered
