"""Pinned dependencies: `make install` and both images install every package at the version the suite passed with
(constraints.txt), and the images are tagged with the mmbatch version, so rebuilding cannot change a score."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.test_docker import DOCKERFILE, parse_dockerfile

CONSTRAINTS = REPO_ROOT / "constraints.txt"


def _pins() -> dict[str, str]:
    lines = [line for line in CONSTRAINTS.read_text().splitlines() if line and not line.startswith("#")]
    return dict(line.split("==") for line in lines)


def _version() -> str:
    found = re.search(r'^version = "([^"]+)"', (REPO_ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert found
    return found.group(1)


def _make_dry_run(*targets: str) -> list[str]:
    result = subprocess.run(["make", "-n", "-B", *targets], capture_output=True, text=True, cwd=REPO_ROOT,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_constraints_pin_every_package_of_the_closure(tmp_path: Path) -> None:
    """Every package mmbatch[infer,dev] brings has an exact pin (a new dependency without one fails here)."""
    check = [sys.executable, "tools/freeze_constraints.py", "--check"]
    result = subprocess.run(check, capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    pins = _pins()
    assert {"polars", "pyarrow", "rich", "openai", "torch", "transformers", "pytest", "ruff", "mypy"} <= set(pins)
    assert all(re.fullmatch(r"\d[\w.]*", version) for version in pins.values()), "exact public versions only"
    # The check does catch a missing pin: the same tool on a copy of the repository that lacks the polars line.
    copy = tmp_path / "repo"
    (copy / "tools").mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "tools" / "freeze_constraints.py", copy / "tools")
    shutil.copy2(REPO_ROOT / "pyproject.toml", copy)
    (copy / "constraints.txt").write_text("".join(f"{name}=={version}\n" for name, version in pins.items()
                                                  if name != "polars"))
    missing = subprocess.run(check, capture_output=True, text=True, cwd=copy, timeout=60)
    assert missing.returncode == 1 and "has no pin for polars" in missing.stderr


def test_make_install_uses_the_constraints() -> None:
    pip_lines = [line for line in _make_dry_run(".cache/installed", "install-light") if " pip install " in line]
    assert len(pip_lines) == 3
    assert all("-c constraints.txt" in line for line in pip_lines), pip_lines
    assert f'"torch=={_pins()["torch"]}"' in pip_lines[0], "TORCH_VERSION and the torch pin must agree"


def test_images_install_with_the_constraints_and_carry_the_version() -> None:
    _, stages = parse_dockerfile(DOCKERFILE.read_text())
    assert any("constraints.txt" in value for value in stages["wheel"].values("COPY"))
    for target in ("light", "full"):
        installs = [run for run in stages[target].values("RUN") if "uv pip install" in run]
        assert installs and all("-c /tmp/wheels/constraints.txt" in run for run in installs), target
        assert f"MMBATCH_VERSION={_version()}" in stages[target].values("ARG"), "the default tag label is stale"
        assert any("org.opencontainers.image.version" in label for label in stages[target].values("LABEL"))
    assert f"TORCH_VERSION={_pins()['torch']}" in stages["full"].values("ARG")


def test_make_docker_tags_images_with_the_mmbatch_version() -> None:
    version = _version()
    builds = [line for line in _make_dry_run("docker") if line.startswith("docker build")]
    for target, line in zip(("light", "full"), builds, strict=True):
        assert f"--target {target}" in line
        assert f"-t mmbatch:{version}-{target}" in line and f"--build-arg MMBATCH_VERSION={version}" in line
