"""Large stage files are written with ``O_DIRECT`` (:mod:`mmbatch.direct_writes`): the same bytes as a usual write,
whatever sizes polars hands over and wherever the file system refuses a direct write; a refused write is the
``OSError`` it is, and leaves nothing behind. The writes go to this machine's real file system; the refusals are the
kernel's own (an unaligned direct write, a file-size limit)."""

from __future__ import annotations

import ctypes
import mmap
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from mmbatch.direct_writes import ALIGNMENT, DIRECT_WRITE_BYTES, DirectFile, file_for
from mmbatch.tableio import read_table, write_table
from tests.conftest import REPO_ROOT


def chunks(seed: int, total: int) -> list[bytes]:
    """``total`` random bytes in pieces of random sizes (empty ones too), as a writer might hand them over."""
    rng = random.Random(seed)
    pieces: list[bytes] = []
    while sum(map(len, pieces)) < total:
        pieces.append(rng.randbytes(rng.choice([0, 1, 7, 4095, 4096, 4097, 20_000, 70_000])))
    return pieces


@pytest.mark.parametrize(("seed", "total", "buffer_bytes"), [
    (0, 0, 4 * ALIGNMENT),  # an empty file
    (1, 3, 4 * ALIGNMENT),  # shorter than one block: only the usual write
    (2, 4 * ALIGNMENT, 4 * ALIGNMENT),  # exactly one buffer
    (3, 300_001, 4 * ALIGNMENT),  # many buffers and an unaligned end
    (4, 1_000_000, 64 * ALIGNMENT),
])
def test_a_direct_file_holds_exactly_the_bytes_written(tmp_path: Path, seed: int, total: int,
                                                       buffer_bytes: int) -> None:
    pieces = chunks(seed, total)
    target = DirectFile(tmp_path / "direct.bin", buffer_bytes=buffer_bytes)
    for piece in pieces:
        assert target.write(piece) == len(piece)
    target.close()
    assert target.direct  # this file system took every aligned write directly
    if total >= buffer_bytes and not on_tmpfs(tmp_path):  # (tmpfs keeps every file in memory, however written)
        assert not in_page_cache(tmp_path / "direct.bin")  # the kernel says: the bytes went past its cache
    assert (tmp_path / "direct.bin").read_bytes() == b"".join(pieces)


def in_page_cache(path: Path) -> bool:
    """Whether the first block of ``path`` is in the page cache, as the kernel's ``mincore`` reports it for a mapping
    of the file that is never touched. (A read with ``RWF_NOWAIT`` is no test: when the block is missing it starts
    the read ahead, which may finish before the call returns.)"""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, ALIGNMENT, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if address == ctypes.c_void_p(-1).value:
            raise OSError(ctypes.get_errno(), "mmap")
        try:
            resident = ctypes.create_string_buffer(1)
            if libc.mincore(address, ALIGNMENT, resident) != 0:
                raise OSError(ctypes.get_errno(), "mincore")
        finally:
            libc.munmap(address, ALIGNMENT)
    finally:
        os.close(fd)
    return bool(resident.raw[0] & 1)


def on_tmpfs(path: Path) -> bool:
    """Whether ``path`` is on a tmpfs (the mount point holding it that is the longest, from /proc/self/mounts)."""
    resolved = path.resolve()
    mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
    holding = [(len(point), kind) for _, point, kind, *_ in mounts if Path(point) in (resolved, *resolved.parents)]
    return max(holding)[1] == "tmpfs"


def test_direct_writes_the_kernel_refuses_are_made_the_usual_way(tmp_path: Path) -> None:
    # A 1,000-byte buffer is no multiple of the device's block: the kernel refuses the first direct write (EINVAL),
    # as a file system that opens with O_DIRECT but cannot write that way does; the rest goes the usual way.
    pieces = chunks(5, 50_000)
    target = DirectFile(tmp_path / "refused.bin", buffer_bytes=1_000, alignment=100)
    for piece in pieces:
        target.write(piece)
    target.close()
    assert not target.direct
    assert in_page_cache(tmp_path / "refused.bin")
    assert (tmp_path / "refused.bin").read_bytes() == b"".join(pieces)


def test_only_files_expected_to_be_large_are_written_directly(tmp_path: Path) -> None:
    with file_for(tmp_path / "small.parquet", DIRECT_WRITE_BYTES - 1) as small:
        assert small == tmp_path / "small.parquet"
    with file_for(tmp_path / "large.parquet", DIRECT_WRITE_BYTES) as large:
        assert isinstance(large, DirectFile)
        large.write(b"written")
    assert (tmp_path / "large.parquet").read_bytes() == b"written"


def payload_table(rows: int) -> pl.DataFrame:
    """A prepared-like table holding over :data:`DIRECT_WRITE_BYTES` of distinct base64-like payloads."""
    rng = random.Random(7)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    size = DIRECT_WRITE_BYTES // rows + 1024
    images = ["".join(rng.choices(alphabet, k=64)) * (size // 64) for _ in range(rows)]
    return pl.DataFrame({"index": list(range(rows)), "question": [f"question {i}" for i in range(rows)],
                         "empty": [None if i % 2 else "" for i in range(rows)], "image": images})


@pytest.mark.parametrize("suffix", [".parquet", ".tsv"])
def test_a_large_payload_table_written_directly_is_the_file_polars_writes(tmp_path: Path, suffix: str) -> None:
    frame = payload_table(600)
    assert frame.estimated_size() >= DIRECT_WRITE_BYTES
    written = write_table(frame, tmp_path / f"direct{suffix}", {"stage": "prepared"})
    if not on_tmpfs(tmp_path):
        assert not in_page_cache(written)
    assert read_table(written).frame.equals(read_table(written).frame)
    assert read_table(written).frame.drop("empty").equals(frame.drop("empty"))
    if suffix == ".parquet":  # byte for byte what polars writes to a path itself, with the same settings
        copy = tmp_path / "polars.parquet"
        frame.with_columns(pl.col("empty").replace("", None)).lazy().sink_parquet(
            copy, compression="uncompressed", row_group_size=_rows_per_group(frame),
            metadata={"mmbatch": _metadata_of(written)})
        assert written.read_bytes() == copy.read_bytes()


@pytest.mark.parametrize("suffix", [".parquet", ".tsv"])
def test_a_large_table_without_payloads_stays_in_the_page_cache_for_the_next_stage(tmp_path: Path,
                                                                                   suffix: str) -> None:
    frame = payload_table(600).rename({"image": "prediction"})  # as large, but answers: extract reads them next
    written = write_table(frame, tmp_path / f"answers{suffix}", {"stage": "inferred"})
    assert in_page_cache(written)
    assert read_table(written).frame.drop("empty").equals(frame.drop("empty"))


def _rows_per_group(frame: pl.DataFrame) -> int:
    from mmbatch.table_writing import ROW_GROUP_BYTES

    return max(1, min(1 << 20, int(ROW_GROUP_BYTES / max(frame.estimated_size() / frame.height, 1))))


def _metadata_of(path: Path) -> str:
    from mmbatch.table_writing import METADATA_KEY

    return pl.read_parquet_metadata(path)[METADATA_KEY]


def test_a_direct_write_past_the_file_size_limit_is_the_os_error_and_leaves_nothing(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(REPO_ROOT)!r})
        from pathlib import Path
        from tests.test_direct_writes import payload_table
        from mmbatch.tableio import write_table
        frame = payload_table(600)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000_000, 20_000_000))
        try:
            write_table(frame, Path({str(tmp_path / "limited.parquet")!r}), {{}})
        except OSError as exc:
            print("errno", exc.errno)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            cwd=REPO_ROOT, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["errno", "27"], result.stdout + result.stderr  # EFBIG: File too large
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file
