"""A run plan of 2 tiny models x 4 benchmarks (MMBench with CircularEval, MME, SEED-Bench, POPE) from one command.

Real parts throughout: two random-weight LLaVAs loaded by the real ``hf`` backend, the bundled examples, every stage.
Proved here: each model is loaded once for all its benchmarks (counted where the backend registry creates it), the
report's summary has 2 rows x 4 benchmarks, a rerun skips every finished pair without loading anything, and the same
plan run as 2 shards (one of them killed with SIGKILL in the middle and resumed) plus a merge gives the same files:
prepared files byte for byte, predictions, extractions and hits equal but for the wall-clock column, metrics and
the report byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.journal import committed_rows
from mmbatch.tableio import read_table
from tests.conftest import EXAMPLES, REPO_ROOT
from tests.support.tiny_models import session_model_dir

BENCHMARKS = ("mmbench", "mme", "seedbench", "pope")
VOLATILE = ["latency_ms"]
"""The wall-clock column: the only one allowed to differ between two runs of the same rows."""


def plan_text(output: Path, models: dict[str, Path]) -> str:
    """The plan: every benchmark cut to a few questions, MMBench with its circular copies (CircularEval)."""
    model_lines = "".join(f"""
  - name: {name}
    backend: hf
    model: {path}
    backend_args: {{device: cpu, dtype: float32, batch_size: 2}}
    generation: {{max_new_tokens: 3}}""" for name, path in models.items())
    return f"""output: {output}
models:{model_lines}
benchmarks:
  - benchmark: mmbench
    input: {EXAMPLES / "mmbench" / "mmbench_example.tsv"}
    limit: 2
  - benchmark: mme
    input: {EXAMPLES / "mme"}
    limit: 2
  - benchmark: seedbench
    input: {EXAMPLES / "seed" / "seed_example.json"}
    media_root: {EXAMPLES / "seed" / "media"}
    limit: 3
  - benchmark: pope
    input: {EXAMPLES / "pope" / "pope_example.tsv"}
    limit: 3
extract:
  no_judge: true
score:
  bootstrap: 50
report: [html, md, csv]
"""


@dataclass(frozen=True)
class PlanRun:
    """The uninterrupted reference run."""

    plan: Path
    """Its plan file."""
    root: Path
    """Its output root."""
    models: dict[str, Path]
    """Model name -> tiny model folder."""
    loads: list[str]
    """Models the backend registry created, in order, during the first run."""
    status: int
    """Exit status of the first run."""
    log: str
    """stdout + stderr of the first run."""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlanRun]:
    import mmbatch.backends.hf as hf_backend

    models = {"tiny-a": session_model_dir(tmp_path_factory, "llava"),
              "tiny-b": session_model_dir(tmp_path_factory, "llava-bos")}
    folder = tmp_path_factory.mktemp("plan")
    plan = folder / "plan.yaml"
    plan.write_text(plan_text(folder / "out", models))
    loads: list[str] = []
    real_create = hf_backend.create_backend

    def counting_create(options):  # the real loader, counted
        loads.append(options.model)
        return real_create(options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hf_backend, "create_backend", counting_create)
        status, log = run_in_process(["run", "--plan", str(plan)])
    yield PlanRun(plan, folder / "out", models, loads, status, log)


def run_in_process(argv: list[str]) -> tuple[int, str]:
    """``main(argv)`` with stdout and stderr captured to a file (rich's consoles write to the current streams)."""
    import contextlib
    import io

    stream = io.StringIO()
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        status = main(argv)
    return status, stream.getvalue()


def test_one_command_runs_every_pair_loading_each_model_once(reference: PlanRun) -> None:
    assert reference.status in (0, 3), reference.log
    assert sorted(reference.loads) == sorted(str(path) for path in reference.models.values()), \
        "each model is loaded exactly once for its four benchmarks"
    assert "model loads: tiny-a 1x, tiny-b 1x" in reference.log
    for model in reference.models:
        for benchmark in BENCHMARKS:
            folder = reference.root / "models" / model / benchmark
            for name in ("predictions.parquet", "extracted.parquet", "metrics.json", "metrics.hits.parquet",
                         "pair.json"):
                assert (folder / name).is_file(), folder / name
    summary = pl.read_csv(reference.root / "report.csv")
    assert sorted(summary["model"].to_list()) == ["tiny-a", "tiny-b"]
    headline = [c for c in summary.columns if c != "model" and not c.endswith(("ci_low", "ci_high"))]
    assert headline == ["mmbench (dev): Overall (circular)", "mme: Perception", "seedbench: Overall", "pope: F1"]
    assert summary.select(headline).null_count().sum_horizontal().item() == 0, "2 rows x 4 benchmarks, all filled"
    mmbench = read_table(reference.root / "models" / "tiny-a" / "mmbench" / "predictions.parquet").frame
    assert mmbench.height > mmbench["g_index"].n_unique(), "MMBench ran with its circular copies"
    metrics = json.loads((reference.root / "models" / "tiny-a" / "mmbench" / "metrics.json").read_text())
    assert {row["metric"] for row in metrics} >= {"circular_acc", "vanilla_acc"}
    html = (reference.root / "report.html").read_text()
    assert html.count('class="board"') == 4 and 'id="summary"' in html


def test_a_rerun_skips_every_finished_pair_without_loading_a_model(reference: PlanRun) -> None:
    before = {path: path.stat().st_mtime_ns for path in (reference.root / "models").rglob("*.parquet")}
    status, log = run_in_process(["run", "--plan", str(reference.plan)])
    assert status == reference.status, log
    assert log.count(": finished earlier (exit") == 8 and "model loads: tiny-a 0x, tiny-b 0x" in log
    assert {path: path.stat().st_mtime_ns for path in before} == before, "no stage file was rewritten"


def test_two_shards_one_killed_then_merged_give_the_same_files(reference: PlanRun, tmp_path: Path) -> None:
    root = tmp_path / "sharded"
    plan = tmp_path / "plan.yaml"
    plan.write_text(plan_text(root, reference.models))
    first_pair = root / "models" / "tiny-a" / "mmbench" / "pair.json"
    log_path = tmp_path / "shard0.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen([sys.executable, "-m", "mmbatch", "run", "--plan", str(plan), "--shard", "0/2"],
                                   cwd=REPO_ROOT, stdout=log_file, stderr=subprocess.STDOUT,
                                   env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    # Shard 0 of 2 runs units 0, 2, 4, 6: (tiny-a, mmbench), (tiny-a, seedbench), (tiny-b, mmbench), (tiny-b,
    # seedbench). Kill it once the first pair is finished and a later one has committed some rows.
    deadline = time.monotonic() + 600
    while process.poll() is None and time.monotonic() < deadline:
        if first_pair.is_file() and any(committed(root, model, benchmark) for model, benchmark in unfinished(root)):
            break
        time.sleep(0.02)
    if process.poll() is not None:
        pytest.fail(f"shard 0 ended before it could be killed:\n{log_path.read_text()}")
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_at_kill = {pair: committed(root, *pair) for pair in unfinished(root)}
    assert any(done_at_kill.values())

    status, log = run_in_process(["run", "--plan", str(plan), "--shard", "0/2"])
    assert status in (0, 3), log
    assert "tiny-a / mmbench: finished earlier" in log, "the pair finished before the kill is skipped"
    for (model, benchmark), rows in done_at_kill.items():
        predictions = root / "models" / model / benchmark / "predictions.parquet"
        reported = re.search(rf"(\d+) already done, \d+ to run -> {re.escape(str(predictions))}", log)
        assert reported is not None and int(reported.group(1)) == rows, f"{model}/{benchmark}: nothing lost or rerun"
    status, log = run_in_process(["run", "--plan", str(plan), "--shard", "1/2"])
    assert status in (0, 3), log
    assert not (root / "report.html").exists(), "a sharded run leaves the report to the merge"
    status, log = run_in_process(["run", "--plan", str(plan), "--merge"])
    assert status == reference.status, log
    assert "model loads: tiny-a 0x, tiny-b 0x" in log and log.count(": finished earlier (exit") == 8
    assert_same_outputs(root, reference.root)


def unfinished(root: Path) -> list[tuple[str, str]]:
    return [(model, benchmark) for model in ("tiny-a", "tiny-b") for benchmark in ("mmbench", "seedbench")
            if not (root / "models" / model / benchmark / "pair.json").is_file()]


def committed(root: Path, model: str, benchmark: str) -> int:
    """Rows committed to the pair's infer progress (0 before it starts, or once it is finished)."""
    progress = root / "models" / model / benchmark / "predictions.parquet.partial"
    rows = committed_rows(progress) if progress.is_dir() else None
    return 0 if rows is None else rows.height


def assert_same_outputs(got: Path, expected: Path) -> None:
    for prepared in sorted((expected / "benchmarks").rglob("prepared.parquet")):
        assert (got / prepared.relative_to(expected)).read_bytes() == prepared.read_bytes(), prepared
    for name in ("predictions.parquet", "extracted.parquet", "metrics.hits.parquet"):
        for path in sorted((expected / "models").rglob(name)):
            mine = read_table(got / path.relative_to(expected)).frame
            theirs = read_table(path).frame
            assert mine.drop(VOLATILE, strict=False).equals(theirs.drop(VOLATILE, strict=False)), path
    for path in [*sorted((expected / "models").rglob("metrics.json")), expected / "report.csv"]:
        assert (got / path.relative_to(expected)).read_text() == path.read_text(), path
