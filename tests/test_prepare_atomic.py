"""A ``prepare`` killed with SIGKILL while writing leaves no output file, only its temporary file."""

from __future__ import annotations

import base64
import io
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from PIL import Image

from tests.conftest import REPO_ROOT


def noisy_jpeg_base64(side: int = 200) -> str:
    """~100 KB of base64: noise does not compress."""
    pixels = random.Random(0).randbytes(side * side * 3)
    buffer = io.BytesIO()
    Image.frombytes("RGB", (side, side), pixels).save(buffer, "JPEG", quality=95)
    return base64.b64encode(buffer.getvalue()).decode()


def test_kill_during_write_leaves_no_output(tmp_path: Path) -> None:
    image = noisy_jpeg_base64()
    source = tmp_path / "big.tsv"
    with source.open("w", encoding="utf-8") as handle:
        handle.write("index\tquestion\tA\tB\tanswer\timage\n")
        for i in range(800):  # ~80 MB: writing it takes long enough to be caught in the act
            handle.write(f"{i}\tQ{i}?\tx\ty\tA\t{image}\n")
    output = tmp_path / "out" / "prepared.parquet"
    process = subprocess.Popen(
        [sys.executable, "-m", "mmbatch", "prepare", "--benchmark", "mmbench", "--input", str(source),
         "--output", str(output)], cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    temporary: list[Path] = []
    while process.poll() is None and time.monotonic() < deadline:
        temporary = [p for p in output.parent.glob(".prepared.parquet.*.tmp") if p.stat().st_size > 0]
        if temporary:
            os.kill(process.pid, signal.SIGKILL)
            break
        time.sleep(0.002)
    process.wait()
    assert temporary, "the write was not caught in progress (it finished too fast or never started)"
    assert process.returncode == -signal.SIGKILL
    assert not output.exists()
