"""Building a test model once: into a staging folder renamed into place, so an interrupted build, or two test
processes building at once, never leave half a model where the next run would take it for a finished one."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def build_once(directory: Path, build: Callable[[Path], object], *, finished_marker: str) -> Path:
    """``directory``, built by ``build(staging)`` unless a finished build is already there.

    Args:
        directory: The model folder to create.
        build: Saves the model into the folder it is given.
        finished_marker: A file the build writes (``model.safetensors``, ``config.json``...): its presence in
            ``directory`` means a finished build.
    """
    if (directory / finished_marker).is_file():
        return directory
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        build(staging)
        try:
            os.rename(staging, directory)
        except OSError:
            # Another process finished first; its model is identical (fixed seeds), keep it.
            if not (directory / finished_marker).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory
