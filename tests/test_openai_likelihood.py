"""Likelihood rows through an OpenAI-compatible server, and the start-up refusal when a server cannot score them.

The server is the test OpenAI server on 127.0.0.1 with a real model behind it (:mod:`support.logprob_model`): it
renders the chat template and computes real prompt log-probabilities with the tiny LLaVA, as vLLM does. The same
prepared file run in-process by the ``hf`` backend must give the same scores.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.tableio import read_table
from tests.conftest import run_cli
from tests.support.logprob_model import ModelReplies
from tests.support.openai_server import OpenAIServer
from tests.support.prepared_files import prepared_frame, write_prepared
from tests.support.tiny_models import session_model_dir

LOGPROB_TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_model_dir(tmp_path_factory, "llava")


def likelihood_file(folder: Path) -> Path:
    """3 likelihood rows (one with 3 options) and 2 generate rows."""
    frame = prepared_frame(5, copies=1, mode="likelihood").with_columns(
        pl.Series("mode", ["likelihood", "likelihood", "likelihood", "generate", "generate"]),
        pl.when(pl.col("index") == 3).then(None).otherwise(pl.col("D")).alias("D"),
        pl.when(pl.col("index") == 3).then(pl.lit("A")).otherwise(pl.col("answer")).alias("answer"))
    return write_prepared(folder / "prepared.parquet", frame)


def infer(prepared: Path, output: Path, *backend: str):
    return run_cli("infer", "--input", str(prepared), "--output", str(output), "--max-new-tokens", "4", *backend,
                   env={"OPENAI_API_KEY": ""})


@pytest.mark.slow
def test_server_prompt_logprobs_equal_the_in_process_scores(model: Path, tmp_path: Path) -> None:
    prepared = likelihood_file(tmp_path)
    local = infer(prepared, tmp_path / "hf.parquet", "--backend", "hf", "--model", str(model), "--device", "cpu",
                  "--dtype", "float32")
    assert local.returncode == 0, local.stderr
    with OpenAIServer(ModelReplies(model, "tiny-llava").script()) as server:
        served = infer(prepared, tmp_path / "server.parquet", "--backend", "openai", "--model", "tiny-llava",
                       "--base-url", server.base_url, "--concurrency", "4")
        bodies = [request.body for request in server.chat_requests]
    assert served.returncode == 0, served.stderr
    ours = read_table(tmp_path / "server.parquet").frame.sort("index")
    reference = read_table(tmp_path / "hf.parquet").frame.sort("index")
    scored = ours.filter(pl.col("mode") == "likelihood")
    expected = reference.filter(pl.col("mode") == "likelihood")
    assert scored["choice_ntokens"].to_list() == expected["choice_ntokens"].to_list()
    assert [len(scores) for scores in scored["choice_logprobs"].to_list()] == [4, 4, 3]
    for row, other in zip(scored["choice_logprobs"].to_list(), expected["choice_logprobs"].to_list(), strict=True):
        assert max(abs(a - b) for a, b in zip(row, other, strict=True)) <= LOGPROB_TOLERANCE
    # The scores rank options differently from row to row: the comparison means something.
    assert len({tuple(sorted(range(len(row)), key=row.__getitem__)) for row in scored["choice_logprobs"]}) > 1
    generated = ours.filter(pl.col("mode") == "generate")
    assert generated["error"].null_count() == 2 and generated["prediction"].null_count() == 0

    continued = [body for body in bodies if body.get("continue_final_message")]
    assert len(continued) == 1 + 4 + 4 + 3  # the probe, then one request per option
    option_body = continued[-1]
    assert option_body["messages"][-1]["role"] == "assistant" and option_body["prompt_logprobs"] == 0
    assert option_body["messages"][0]["content"][0]["type"] == "image_url"
    context = [body for body in bodies if body.get("add_generation_prompt") and body.get("prompt_logprobs") == 0]
    assert len(context) == 3  # one per likelihood row, to find where the options begin


def test_a_server_without_prompt_logprobs_is_refused_before_any_row(tmp_path: Path) -> None:
    prepared = likelihood_file(tmp_path)
    output = tmp_path / "out.parquet"
    with OpenAIServer() as server:  # answers chat requests, never with prompt_logprobs (like the OpenAI API)
        result = infer(prepared, output, "--backend", "openai", "--model", "local-model", "--base-url",
                       server.base_url)
        requests = server.chat_requests
    assert result.returncode == 2
    assert "3 likelihood rows to run with --backend openai, but" in result.stderr
    assert "cannot score likelihood rows" in result.stderr and "--backend hf" in result.stderr
    assert "--mode generate" in result.stderr
    assert len(requests) == 1 and requests[0].body["prompt_logprobs"] == 0  # only the probe: no row ran
    assert not output.exists()


def test_a_file_without_likelihood_rows_needs_no_probe(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(2, copies=1))
    with OpenAIServer() as server:
        result = infer(prepared, tmp_path / "out.parquet", "--backend", "openai", "--model", "local-model",
                       "--base-url", server.base_url)
        bodies = [request.body for request in server.chat_requests]
    assert result.returncode == 0, result.stderr
    assert len(bodies) == 2 and not any("prompt_logprobs" in body for body in bodies)
