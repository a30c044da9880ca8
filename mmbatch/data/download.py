"""Downloading one file: resumable (HTTP ``Range``), with a progress bar, its MD5 checked before it is used.

Bytes go to ``NAME.part`` beside the target. An interrupted download keeps the part and the next run asks the server
for the rest (``Range: bytes=N-``; a server that answers with the whole file starts it again). A finished part whose
MD5 differs from the publisher's (a corrupted or truncated copy, another version) is deleted; only a part that
matches is renamed to ``NAME``, so the target never holds a half-written or unverified file.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
from pathlib import Path

from mmbatch import __version__
from mmbatch.errors import BadInputError

CHUNK_BYTES = 1 << 20
KIB = 1024
"""The progress bar counts KiB (a byte count is unreadable at MMBench's 300 MB)."""
TIMEOUT_S = 60.0
"""Seconds without a byte before a download counts as interrupted."""


class DownloadError(BadInputError):
    """A download that failed (server unreachable, HTTP error, interrupted, wrong MD5): exit 2."""


def file_md5(path: Path) -> str:
    """The MD5 of a file's bytes, hex (what VLMEvalKit publishes)."""
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def part_path(target: Path) -> Path:
    """Where ``target`` is downloaded to until its MD5 is checked."""
    return target.with_name(target.name + ".part")


def download(url: str, target: Path, md5: str, *, timeout_s: float = TIMEOUT_S) -> Path:
    """Download ``url`` to ``target`` (resuming a part left by an earlier run) and check its MD5.

    Raises:
        DownloadError: unreachable (offline), an HTTP error, an interrupted transfer (the part is kept for the next
            run), or an MD5 that differs (the part is deleted).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(target)
    _fetch_into(url, part, timeout_s)
    found = file_md5(part)
    if found != md5:
        size = part.stat().st_size
        part.unlink()
        raise DownloadError(f"the downloaded file ({size:,} bytes) has MD5 {found}, not the published {md5}: a "
                            f"corrupted, truncated or other version; it was deleted. Rerun to download it again, "
                            f"or check {url}", path=target)
    os.replace(part, target)
    return target


def _fetch_into(url: str, part: Path, timeout_s: float) -> None:
    from mmbatch.progress import progress

    have = part.stat().st_size if part.is_file() else 0
    headers = {"User-Agent": f"mmbatch/{__version__}", **({"Range": f"bytes={have}-"} if have else {})}
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout_s)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # the part already holds every byte: check it
            return
        raise DownloadError(f"cannot download {url}: HTTP {exc.code} {exc.reason}",
                            path=part.with_suffix("")) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DownloadError(f"cannot reach {url} ({reason})", path=part.with_suffix("")) from None
    with response:
        resumed = response.status == 206 and _resumes_at(response.headers.get("Content-Range"), have)
        length = response.headers.get("Content-Length")
        total = (have if resumed else 0) + int(length) if length and length.isdigit() else None
        written = have if resumed else 0
        try:
            with part.open("ab" if resumed else "wb") as out, \
                    progress(f"download {part.name.removesuffix('.part')}", total=-(-(total or 0) // KIB),
                             unit="KiB") as bar:
                bar.advance(written // KIB)
                while chunk := response.read(CHUNK_BYTES):
                    out.write(chunk)
                    bar.advance((written + len(chunk)) // KIB - written // KIB)
                    written += len(chunk)
                out.flush()
                os.fsync(out.fileno())
        except (OSError, ValueError, http.client.HTTPException) as exc:  # a reset connection, a timeout, a short read
            raise _interrupted(url, part, written, total, exc) from None
    if total is not None and written < total:
        raise _interrupted(url, part, written, total, None)


def _resumes_at(content_range: str | None, have: int) -> bool:
    """Whether a 206 answer continues at byte ``have`` (``bytes 100-999/1000``)."""
    if not content_range:
        return False
    return content_range.replace("bytes ", "").split("-", 1)[0].strip() == str(have)


def _interrupted(url: str, part: Path, written: int, total: int | None, exc: BaseException | None) -> DownloadError:
    of = f" of {total:,}" if total is not None else ""
    why = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
    return DownloadError(f"the download from {url} stopped at {written:,}{of} bytes{why}; the part is kept as "
                         f"{part.name}: rerun to resume it", path=part.with_name(part.name.removesuffix(".part")))
