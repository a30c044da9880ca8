"""Shared test fixtures. The suite runs offline on CPU; GPU and network tests are opt-in markers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist's workers start with COLUMNS=80 and LINES=24 set, though they print to a pipe: the in-process CLI
    # would cut its tables to 80 columns, unlike a serial run or a scheduler's log (mmbatch.console reads them once).
    for variable in ("COLUMNS", "LINES"):
        os.environ.pop(variable, None)

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
EXAMPLES = REPO_ROOT / "examples"


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``mmbatch ARGS`` in a real subprocess and capture its output."""
    # The checkout under test is imported even from another working directory (not an installed copy elsewhere).
    python_path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    full_env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": python_path, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mmbatch", *args],
        capture_output=True, text=True, env=full_env, cwd=cwd or REPO_ROOT, timeout=timeout,
    )


@pytest.fixture
def cli():
    """The :func:`run_cli` helper as a fixture."""
    return run_cli


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``: real model outputs with the official scores they must reproduce."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"{SHARED_DATA} is missing: CI runs with ../shared beside the repository")
    return SHARED_DATA
