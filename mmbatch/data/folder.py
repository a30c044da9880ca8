"""Where fetched benchmark files live: ``$MMBATCH_DATA/<benchmark>/<file>``.

``MMBATCH_DATA`` defaults to ``$XDG_CACHE_HOME/mmbatch/data`` (``~/.cache/mmbatch/data``), beside the other caches a
user clears when space runs out; point it at a shared disk to fetch each file once for a whole team.
``MMBATCH_DATA_MIRROR`` (a base URL) fetches every file from ``<mirror>/<file>`` instead of its publisher, for labs
whose machines reach only an internal mirror; the MD5 is checked all the same.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_VARIABLE = "MMBATCH_DATA"
MIRROR_VARIABLE = "MMBATCH_DATA_MIRROR"


def data_folder() -> Path:
    """The data folder (not created here)."""
    given = os.environ.get(DATA_VARIABLE, "").strip()
    if given:
        return Path(given).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(cache).expanduser() if cache else Path.home() / ".cache") / "mmbatch" / "data"


def benchmark_folder(benchmark: str) -> Path:
    """The folder of one benchmark's files."""
    return data_folder() / benchmark


def download_url(url: str, file: str) -> str:
    """Where to download ``file`` from: its publisher's ``url``, or the mirror's copy when a mirror is set."""
    mirror = os.environ.get(MIRROR_VARIABLE, "").strip()
    return f"{mirror.rstrip('/')}/{file}" if mirror else url
