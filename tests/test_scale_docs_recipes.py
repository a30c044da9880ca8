"""docs/scale.md's SEED-Bench commands work as written (issue 25 item 1: the page showed a pipeline.sh command that
exited 2): the many-GPU block and the pipeline.sh command run in a folder laid out as the page says (SEED-Bench.json
beside SEED-Bench-image/), with only the model swapped for the echo backend and fewer shards."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.support.recipe_cases import assert_expected_metrics, case

DOCS = REPO_ROOT / "docs" / "scale.md"
MODEL = "--backend hf --model llava-hf/llava-1.5-7b-hf --dtype bfloat16"


def bash_block(containing: str) -> str:
    """The docs' one ```bash block that contains ``containing``, its line continuations joined."""
    blocks = [b for b in re.findall(r"```bash\n(.*?)```", DOCS.read_text(), flags=re.DOTALL) if containing in b]
    assert len(blocks) == 1, f"docs/scale.md: {len(blocks)} bash blocks contain {containing!r}"
    return blocks[0]


def seed_folder(tmp_path: Path) -> Path:
    """A folder laid out as docs/scale.md says: SEED-Bench.json beside SEED-Bench-image/ (the bundled example)."""
    folder = tmp_path / "eval"
    folder.mkdir()
    (folder / "SEED-Bench.json").write_text((REPO_ROOT / "examples/seed/seed_example.json").read_text())
    (folder / "SEED-Bench-image").symlink_to(REPO_ROOT / "examples/seed/media")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mmbatch").write_text(f"#!/bin/sh\nexec {sys.executable} -m mmbatch \"$@\"\n")
    (bin_dir / "mmbatch").chmod(0o755)
    return folder


def run_bash(script: str, folder: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    inherited = {key: value for key, value in os.environ.items() if not key.startswith("MMBATCH")}
    full_env = {**inherited, "PATH": f"{folder.parent / 'bin'}{os.pathsep}{os.environ['PATH']}",
                "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200", **(env or {})}
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=folder, env=full_env, capture_output=True,
                          text=True, timeout=600)


def test_the_many_gpu_seed_commands_work_as_written(tmp_path: Path) -> None:
    block = bash_block("prepare --benchmark seedbench")
    assert MODEL in block
    folder = seed_folder(tmp_path)
    result = run_bash(block.replace(MODEL, "--backend echo --model answer").replace("N=8", "N=2"), folder)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_expected_metrics(case("seed-media"), folder / "run" / "metrics.json")


def test_the_pipeline_seed_command_works_as_written(tmp_path: Path) -> None:
    block = bash_block("INPUT=SEED-Bench.json MEDIA_ROOT=SEED-Bench-image")
    folder = seed_folder(tmp_path)
    command = (block.replace("~/eval", str(folder)).replace("~/mmbatch", str(REPO_ROOT))
               .replace("BACKEND=hf", "BACKEND=echo").replace("MODEL=llava-hf/llava-1.5-7b-hf", "MODEL=answer")
               .replace("NUM_SHARDS=8", "NUM_SHARDS=2"))
    result = run_bash(command, folder, {"MMBATCH_NO_DOCKER": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert_expected_metrics(case("seed-media"), folder / "run" / "seed" / "metrics.json")
