"""Tables printed to a pipe (Airflow, Kubernetes and Slurm logs) keep their full width: no cut names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mmbatch.cli import main
from tests.conftest import REPO_ROOT


def test_score_table_is_full_width_in_a_pipe(shared_data: Path, tmp_path: Path) -> None:
    extracted = tmp_path / "extracted.parquet"
    source = shared_data / "vlmevalkit_vila" / "vila_13b" / "vila_13b_CCBench.xlsx"
    assert main(["extract", "--input", str(source), "--output", str(extracted), "--benchmark", "mmbench",
                 "--no-judge"]) == 0
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}  # as a scheduler's log sees it
    result = subprocess.run([sys.executable, "-m", "mmbatch", "score", "--input", str(extracted), "--output",
                             str(tmp_path / "metrics.json"), "--bootstrap", "20"],
                            capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "calligraphy_painting" in result.stdout
    assert "…" not in result.stdout
    widths = {len(line.rstrip()) for line in result.stdout.splitlines() if line.startswith("│")}
    assert len(widths) == 1 and widths.pop() > 80  # one table, every row whole, wider than rich's default 80
