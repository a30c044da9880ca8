"""A benchmark's official file in the data folder: found there (its MD5 checked once), else downloaded.

A file whose publisher gives no checksum (SEED-Bench's JSON, A-OKVQA's TSV) is never downloaded: mmbatch would have
nothing to check it against. It is used when a person has placed it in the data folder, with a warning that it is
unverified. Every refusal says which file to place where (the message a machine without a network needs).
"""

from __future__ import annotations

import json
from pathlib import Path

from mmbatch.benchmarks.declaration import Benchmark, SourceFile
from mmbatch.data.download import DownloadError, download, file_md5
from mmbatch.data.folder import benchmark_folder, download_url
from mmbatch.errors import BadInputError
from mmbatch.tableio import atomic_path


def source_file(benchmark: Benchmark, split: str | None) -> SourceFile:
    """The declared file of ``split`` (the first declared when None).

    Raises:
        BadInputError: the benchmark declares no file, or none for that split (naming the splits it has).
    """
    if not benchmark.sources:
        raise BadInputError(f"{benchmark.name} declares no official file to fetch: pass --input", column="split")
    if split is None:
        return benchmark.sources[0]
    for source in benchmark.sources:
        if source.split == split:
            return source
    raise BadInputError(f"{benchmark.name} has no split {split!r}; its splits are "
                        f"{', '.join(source.split for source in benchmark.sources)}", column="split")


def fetched_input(benchmark: Benchmark, split: str | None) -> tuple[Path, SourceFile]:
    """The local copy of ``benchmark``'s file for ``split``, downloaded now when missing, its MD5 checked.

    Raises:
        BadInputError: an unknown split, a file that cannot be downloaded (offline, HTTP error, wrong MD5; the
            message says which file to place where), or a placed file whose MD5 differs from the published one.
    """
    source = source_file(benchmark, split)
    target = benchmark_folder(benchmark.name) / source.file
    if source.md5 is None:
        if target.exists():
            _warn(f"{target}: used unverified ({benchmark.name} {source.split}: its publisher gives no checksum)")
            return target, source
        raise BadInputError(f"{benchmark.name} ({source.split}): mmbatch does not download {source.file}: "
                            f"{source.how_to_get}. Place it at {target}, or pass --input", column="split")
    if target.is_file():
        check_placed(target, source.md5)
        return target, source
    if source.url is None:
        raise BadInputError(f"{benchmark.name} ({source.split}): {source.how_to_get}. Place {source.file} (MD5 "
                            f"{source.md5}) at {target}, or pass --input")
    try:
        download(download_url(source.url, source.file), target, source.md5)
    except DownloadError as exc:
        raise DownloadError(f"{exc.reason}. Without a network: place {source.file} (MD5 {source.md5}, published at "
                            f"{source.url}) at {target}, or pass --input", path=exc.path) from None
    _record_verified(target, source.md5)
    return target, source


def check_placed(target: Path, md5: str) -> None:
    """Check a file already in the data folder against ``md5`` (once: a record beside it remembers a match).

    Raises:
        BadInputError: its MD5 differs (the file is left as it is: it may be someone's own copy).
    """
    record = _marker(target)
    stat = target.stat()
    if record.is_file():
        try:
            seen = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            seen = None
        if seen == {"md5": md5, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}:
            return
    found = file_md5(target)
    if found != md5:
        raise BadInputError(f"its MD5 is {found}, not the published {md5}: a corrupted, truncated or other "
                            "version. Delete it (the next run downloads it again) or pass --input", path=target)
    _record_verified(target, md5)


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".md5.json")


def _record_verified(target: Path, md5: str) -> None:
    stat = target.stat()
    with atomic_path(_marker(target)) as tmp:
        tmp.write_text(json.dumps({"md5": md5, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}) + "\n",
                       encoding="utf-8")


def _warn(message: str) -> None:
    from rich.text import Text

    from mmbatch.console import error_console

    error_console.print(Text("warning: ", style="yellow") + Text(message), highlight=False, soft_wrap=True)
