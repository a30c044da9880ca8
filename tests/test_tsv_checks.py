"""The TSV checks made before polars reads a file (mmbatch/tsv_checks.py): long lines found wherever they are, though
the check reads a few pages per window, and a file an address-space limit leaves no room for refused with a message
instead of polars aborting."""

from __future__ import annotations

import mmap
import random
from pathlib import Path

import pytest

import mmbatch.tsv_checks as tsv_checks
from mmbatch.errors import BadInputError


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit of 1.5 allocation units (where a mapping may begin), so that lines and windows cross them."""
    monkeypatch.setattr(tsv_checks, "MAX_LINE_BYTES", mmap.ALLOCATIONGRANULARITY * 3 // 2)


def _lines(path: Path, lengths: list[int], *, last_break: bool = True) -> Path:
    text = "\n".join("x" * length for length in lengths) + ("\n" if last_break else "")
    path.write_text(text, encoding="ascii")
    return path


@pytest.mark.usefixtures("small_windows")
def test_lines_within_the_limit_pass_across_windows(tmp_path: Path) -> None:
    limit = tsv_checks.MAX_LINE_BYTES
    tsv_checks.check_line_lengths(_lines(tmp_path / "ok.tsv", [10, limit, 3000, limit, 5]))
    tsv_checks.check_line_lengths(_lines(tmp_path / "last.tsv", [10, limit], last_break=False))


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize(("lengths", "line", "last_break"), [
    ([10, 3000, 7000, 5], 3, True),  # starts in the first window, ends in the third
    ([7000], 1, True),
    ([10, 20, 7000], 3, False),  # the last line, without a line break
])
def test_the_first_long_line_is_named(tmp_path: Path, lengths: list[int], line: int, last_break: bool) -> None:
    with pytest.raises(BadInputError, match=f"line {line} is over"):
        tsv_checks.check_line_lengths(_lines(tmp_path / "long.tsv", lengths, last_break=last_break))


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize("seed", range(40))
def test_the_check_refuses_exactly_the_files_with_a_long_line_and_names_the_first(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    limit = tsv_checks.MAX_LINE_BYTES
    choices = [0, 1, 50, limit // 3, limit - 1, limit, limit + 1, 2 * limit]
    lengths = [rng.choice(choices) for _ in range(rng.randint(1, 12))]
    if seed % 2:  # half the files have every line within the limit, however near
        lengths = [min(length, limit) for length in lengths]
    last_break = rng.random() < 0.5
    source = _lines(tmp_path / "random.tsv", lengths, last_break=last_break)
    long = [number for number, length in enumerate(lengths, start=1) if length > limit]
    if not long:
        tsv_checks.check_line_lengths(source)
        return
    with pytest.raises(BadInputError, match=f"line {long[0]} is over"):
        tsv_checks.check_line_lengths(source)


def test_no_room_under_an_address_space_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal itself (tests/test_edge_arguments.py runs prepare under a real ``ulimit -v``): the sizes and the
    limit named; nothing checked without a limit."""
    import resource

    source = _lines(tmp_path / "t.tsv", [1000] * 100)
    held = tsv_checks._address_space_held()
    assert held is not None and held > 0
    monkeypatch.setattr(resource, "getrlimit", lambda _: (held + 3 * source.stat().st_size, resource.RLIM_INFINITY))
    with pytest.raises(BadInputError, match=r"not enough memory to read this 0 MB file.*ulimit -v"):
        tsv_checks.check_room_to_read(source)
    monkeypatch.setattr(resource, "getrlimit", lambda _: (held + 5 * source.stat().st_size + (64 << 20),
                                                          resource.RLIM_INFINITY))
    tsv_checks.check_room_to_read(source)
    monkeypatch.setattr(resource, "getrlimit", lambda _: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    tsv_checks.check_room_to_read(source)
