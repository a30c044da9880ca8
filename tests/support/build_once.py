"""Building a test model once: under a file lock, into a staging folder renamed into place.

The suite runs in parallel (``pytest -n``): two workers that need the same model at once would both build it. The
lock (an ``flock`` on a file in the temporary folder named after the model folder's path, so the cache folder holds
models only) makes the second wait for the first and then take its finished build. The staging folder still guards
against an interrupted build: a killed builder leaves no half model where the next run would take it for a finished
one, and the lock dies with it.
"""

from __future__ import annotations

import fcntl
import hashlib
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
    with open(_lock_file(directory), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or when this process dies
        if (directory / finished_marker).is_file():  # another worker built it while this one waited
            return directory
        staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
        try:
            build(staging)
            try:
                os.rename(staging, directory)
            except OSError:
                # A process of an older suite without the lock finished first; its model is identical (fixed seeds).
                if not (directory / finished_marker).is_file():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return directory


def _lock_file(directory: Path) -> Path:
    """The lock of ``directory``'s build: one per model folder, shared by every process of this machine."""
    key = hashlib.sha256(str(directory.resolve()).encode("utf-8")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"mmbatch-build-{key}.lock"
