"""The families whose image or video processors exist only in transformers' torchvision build (Llama 4, Cohere2-Vision,
LFM2-VL, Molmo2, Kimi-K2.5, MiniCPM-V 4.6 and 4.7, MiniCPM-OCR, Phi-4-multimodal) pass the architecture matrix's
assertions, run by ``tests/test_family_matrix.py``, and those with a video input the video assertions of
``tests/test_hf_video.py``, run by ``tests/test_torchvision_video.py``, and Phi-4-multimodal's vision adapter
(``tests/test_phi4_vision_adapter.py``), in the test environment that has torchvision
(``make torchvision-env``: this Python's packages plus torchvision 0.28.0 installed without its dependencies, its nms
fake registrations made conditional by ``tests/support/patch_torchvision_cpu.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT
from tests.support.families import FAMILIES, TORCHVISION_ONLY
from tests.test_phi4_vision_adapter import ADAPTER_TESTS
from tests.test_torchvision_video import TEST_COUNT as VIDEO_TESTS

TORCHVISION_VENV = REPO_ROOT / ".cache" / "torchvision-venv"


@pytest.mark.slow
def test_the_torchvision_families_pass_the_matrix_in_their_environment() -> None:
    if not (TORCHVISION_VENV / "installed").exists():
        pytest.skip("the torchvision test environment is missing: `make torchvision-env` (which `make test` runs)")
    env = {**os.environ, TORCHVISION_ONLY: "1", "PYTHONPATH": str(REPO_ROOT)}
    run = subprocess.run([str(TORCHVISION_VENV / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/test_family_matrix.py", "tests/test_torchvision_video.py",
                          "tests/test_phi4_vision_adapter.py"], capture_output=True,
                         text=True, env=env, cwd=REPO_ROOT, timeout=900)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    families = sorted(name for name, family in FAMILIES.items() if family.needs_torchvision)
    tests_per_family = 5  # the matrix's assertions, the system prompt's included
    # the adapter file's torchvision tests, and its one test that runs anywhere
    expected = len(families) * tests_per_family + VIDEO_TESTS + ADAPTER_TESTS + 1
    assert f"{expected} passed" in run.stdout, run.stdout[-2000:]


def test_the_main_environment_runs_the_other_families() -> None:
    from tests.support.families import matrix_families

    if "torchvision" in sys.modules or os.environ.get(TORCHVISION_ONLY):
        pytest.skip("this is the torchvision environment")
    assert not any(FAMILIES[name].needs_torchvision for name in matrix_families())
