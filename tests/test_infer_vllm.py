"""``mmbatch infer --backend vllm`` on vLLM's CPU build, against the ``hf`` backend on the same tiny model.

vLLM lives in its own virtualenv (``make vllm-env`` builds ``.cache/vllm-venv``; ``make test`` builds it when
missing), so the vLLM runs are real ``mmbatch`` subprocesses of that interpreter, and the ``hf`` run is one of this
one. The model is a tiny random-weight LLaVA with 32-dimensional attention heads (vLLM's CPU attention needs at
least 32), saved with published LLaVA weight names. In float32 the greedy answers must be identical and every
option log-probability within 1e-4.

The engine runs in-process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``: a 4-7 s start instead of 33-54 s) and without
``torch.compile`` (``TORCHDYNAMO_DISABLE=1`` with ``enforce_eager``: no 34 s kernel compile); the KV cache gets a
fixed 64 MiB, because on the CPU build ``gpu_memory_utilization`` reserves a fraction of the host's memory.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import polars as pl
import pytest

from mmbatch.tableio import read_metadata, read_table
from tests.conftest import REPO_ROOT, run_cli
from tests.support.prepared_files import prepared_frame, write_prepared
from tests.support.tiny_models import session_model_dir

VLLM_VENV = REPO_ROOT / ".cache" / "vllm-venv"
VLLM_PYTHON = VLLM_VENV / "bin" / "python"
INSTALLED_MARKER = VLLM_VENV / "installed"
ENGINE_ARGS = ("--backend-arg", "kv_cache_memory_bytes=67108864", "--backend-arg", "enforce_eager=true",
               "--backend-arg", "max_model_len=1024")
LOGPROB_TOLERANCE = 1e-4


def vllm_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``mmbatch ARGS`` run by the vLLM virtualenv's interpreter (this checkout's mmbatch: cwd is the repo)."""
    if not INSTALLED_MARKER.exists():
        pytest.skip("the vLLM venv is missing: `make vllm-env` (which `make test` runs) creates it")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.update(VLLM_ENABLE_V1_MULTIPROCESSING="0", TORCHDYNAMO_DISABLE="1", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", VLLM_LOGGING_LEVEL="WARNING", COLUMNS="200")
    return subprocess.run([str(VLLM_PYTHON), "-m", "mmbatch", *args], capture_output=True, text=True, env=env,
                          cwd=REPO_ROOT, timeout=600)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_model_dir(tmp_path_factory, "vllm-llava")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """5 questions x 2 circular copies generated, and 4 likelihood rows (one with 3 options)."""
    generate = prepared_frame(5, copies=2)
    likelihood = prepared_frame(4, copies=1, mode="likelihood").with_columns(
        (pl.col("index") + 100).alias("index"), (pl.col("g_index") + 100).alias("g_index"),
        pl.when(pl.col("index") == 4).then(None).otherwise(pl.col("D")).alias("D"),
        pl.when(pl.col("index") == 4).then(pl.lit("A")).otherwise(pl.col("answer")).alias("answer"))
    frame = pl.concat([generate, likelihood], how="vertical_relaxed")
    return write_prepared(tmp_path_factory.mktemp("vllm") / "prepared.parquet", frame)


@pytest.fixture(scope="module")
def hf_rows(model: Path, prepared: Path, tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    output = tmp_path_factory.mktemp("hf") / "hf.parquet"
    result = run_cli("infer", "--input", str(prepared), "--output", str(output), "--backend", "hf", "--model",
                     str(model), "--device", "cpu", "--dtype", "float32", "--max-new-tokens", "8")
    assert result.returncode == 0, result.stderr
    return read_table(output).frame.sort("index")


def assert_same_as_hf(rows: pl.DataFrame, hf: pl.DataFrame) -> None:
    assert rows["index"].to_list() == hf["index"].to_list()
    assert rows["error"].null_count() == rows.height
    generated = rows.filter(pl.col("choice_logprobs").is_null())
    expected = hf.filter(pl.col("choice_logprobs").is_null())
    assert generated.height == 10
    assert generated["prediction"].to_list() == expected["prediction"].to_list()
    assert generated["output_tokens"].to_list() == expected["output_tokens"].to_list()
    assert len(set(generated["prediction"].to_list())) > 3  # random weights, different images: answers differ
    scored = rows.filter(pl.col("choice_logprobs").is_not_null())
    reference = hf.filter(pl.col("choice_logprobs").is_not_null())
    assert scored["choice_ntokens"].to_list() == reference["choice_ntokens"].to_list()
    for ours, theirs in zip(scored["choice_logprobs"].to_list(), reference["choice_logprobs"].to_list(), strict=True):
        assert max(abs(a - b) for a, b in zip(ours, theirs, strict=True)) <= LOGPROB_TOLERANCE
    assert [len(scores) for scores in scored["choice_logprobs"].to_list()] == [4, 4, 4, 3]


@pytest.mark.slow
def test_vllm_shards_merge_and_resume_equal_the_hf_backend(model: Path, prepared: Path, hf_rows: pl.DataFrame,
                                                           tmp_path: Path) -> None:
    output = tmp_path / "vllm.parquet"
    for shard in ("0/2", "1/2"):
        result = vllm_cli("infer", "--input", str(prepared), "--output", str(output), "--backend", "vllm",
                          "--model", str(model), "--dtype", "float32", "--max-new-tokens", "8", "--shard", shard,
                          *ENGINE_ARGS)
        assert result.returncode == 0, result.stderr[-4000:]
    shards = sorted(tmp_path.glob("vllm.shard-*-of-2.parquet"))
    merged = tmp_path / "merged.parquet"
    assert run_cli("merge", "--output", str(merged), *map(str, shards)).returncode == 0
    assert_same_as_hf(read_table(merged).frame.sort("index"), hf_rows)

    settings = read_metadata(shards[0])["infer"]["backend_settings"]
    assert settings["backend"] == "vllm" and settings["dtype"] == "float32" and settings["device"] == "cpu"
    assert settings["engine"]["kv_cache_memory_bytes"] == 67108864 and settings["engine"]["enforce_eager"] is True
    resume = read_metadata(shards[0])["infer"]["resume"]
    assert resume["max_model_len"] == 1024 and resume["kv_cache_dtype"] == "auto" and resume["dtype"] == "float32"

    # A rerun of a finished shard resumes: nothing to run, so no engine starts.
    again = vllm_cli("infer", "--input", str(prepared), "--output", str(output), "--backend", "vllm", "--model",
                     str(model), "--dtype", "float32", "--max-new-tokens", "8", "--shard", "0/2", *ENGINE_ARGS)
    assert again.returncode == 0 and "to run" in again.stderr and ", 0 to run" in again.stderr, again.stderr
    # An engine setting that changes results does not resume silently.
    changed = vllm_cli("infer", "--input", str(prepared), "--output", str(output), "--backend", "vllm", "--model",
                       str(model), "--dtype", "float32", "--max-new-tokens", "8", "--shard", "0/2",
                       *ENGINE_ARGS[:4], "--backend-arg", "max_model_len=2048")
    assert changed.returncode == 2 and "(max_model_len differ)" in changed.stderr, changed.stderr[-2000:]


def test_engine_settings_are_checked_before_any_model_loads(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(1, copies=1))
    base = ("infer", "--input", str(prepared), "--output", str(tmp_path / "out.parquet"), "--model", "m",
            "--backend", "vllm")
    typo = run_cli(*base, "--backend-arg", "max_model_lenght=10")
    assert typo.returncode == 2 and "the vllm backend has no such option" in typo.stderr
    assert "tensor_parallel_size, max_model_len, gpu_memory_utilization, kv_cache_dtype" in typo.stderr
    wrong = run_cli(*base, "--backend-arg", "tensor_parallel_size=two")
    assert wrong.returncode == 2 and "tensor_parallel_size='two': expected int" in wrong.stderr
    assert not (tmp_path / "out.parquet").exists()


def test_engine_options_from_backend_args() -> None:
    from mmbatch.backends.options import backend_options
    from mmbatch.backends.registry import get_backend_declaration
    from mmbatch.backends.vllm_engine import VllmOptions

    parsed = backend_options(get_backend_declaration("vllm"), {"model": "m", "dtype": "bfloat16", "device": "cuda"},
                             ["tensor_parallel_size=2", "gpu_memory_utilization=0.8", "kv_cache_dtype=fp8",
                              "enforce_eager=true", "max_model_len=4096", "max_images=8"])
    assert parsed == VllmOptions(model="m", dtype="bfloat16", tensor_parallel_size=2, gpu_memory_utilization=0.8,
                                 kv_cache_dtype="fp8", enforce_eager=True, max_model_len=4096, max_images=8)
    assert parsed.chunk_rows() == 512


@pytest.mark.slow
def test_system_prompt_and_gen_args_give_the_hf_answers(model: Path, tmp_path: Path) -> None:
    """The same system message, padding-blind repetition penalty and stop string on both backends: same answers."""
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(5, copies=1))
    controls = ("--max-new-tokens", "8", "--dtype", "float32", "--system-prompt", "Answer with one letter.",
                "--gen-arg", "repetition_penalty=1.5", "--gen-arg", "stop=e")
    vllm = vllm_cli("infer", "--input", str(prepared), "--output", str(tmp_path / "vllm.parquet"), "--backend", "vllm",
                    "--model", str(model), *controls, *ENGINE_ARGS)
    assert vllm.returncode == 0, vllm.stderr[-4000:]
    hf = run_cli("infer", "--input", str(prepared), "--output", str(tmp_path / "hf.parquet"), "--backend", "hf",
                 "--model", str(model), "--device", "cpu", "--batch-size", "5", *controls)
    assert hf.returncode == 0, hf.stderr
    ours, theirs = (read_table(tmp_path / name).frame.sort("index") for name in ("vllm.parquet", "hf.parquet"))
    assert ours["prediction"].to_list() == theirs["prediction"].to_list()
    assert ours["output_tokens"].to_list() == theirs["output_tokens"].to_list()
    assert all("e" not in (text or "") for text in ours["prediction"].to_list())
    settings = read_metadata(tmp_path / "vllm.parquet")["infer"]["backend_settings"]
    assert settings["system_prompt"] == "Answer with one letter."
    assert settings["generation"]["repetition_penalty"] == 1.5 and settings["generation"]["stop"] == ["e"]


@pytest.mark.slow
def test_vllm_on_ray_equals_the_hf_backend(model: Path, prepared: Path, hf_rows: pl.DataFrame,
                                           tmp_path: Path) -> None:
    """``--executor ray --backend vllm``: a one-machine Ray cluster (127.0.0.1 only) started by the run, one actor
    holding the vLLM engine, loaded once; the file is the hf backend's, as the local vLLM run's is."""
    output = tmp_path / "vllm-ray.parquet"
    result = vllm_cli("infer", "--input", str(prepared), "--output", str(output), "--backend", "vllm", "--model",
                      str(model), "--dtype", "float32", "--max-new-tokens", "8", "--executor", "ray",
                      "--ray-decode-cpus", "0.5", *ENGINE_ARGS)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "infer: on Ray: 14 rows in" in result.stdout + result.stderr
    assert_same_as_hf(read_table(output).frame.sort("index"), hf_rows)
    infer = read_metadata(output)["infer"]
    assert infer["executor"]["name"] == "ray" and infer["backend_settings"]["backend"] == "vllm"
