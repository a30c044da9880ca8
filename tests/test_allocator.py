"""``prepare``, ``extract`` and ``score`` ask polars' jemalloc to hand freed pages back (mmbatch/allocator.py);
the user's setting wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmbatch import allocator
from mmbatch.allocator import POLARS_DEFAULTS, SETTING, TABLE_STAGE_OPTIONS, tune_for


@pytest.fixture
def no_polars_yet(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """As in a fresh ``mmbatch`` process, where nothing has imported polars when the command line is read."""
    monkeypatch.delitem(sys.modules, "polars", raising=False)
    monkeypatch.delenv(SETTING, raising=False)
    return monkeypatch


@pytest.mark.parametrize("command", sorted(allocator.TABLE_COMMANDS))
def test_a_table_command_sets_the_options(no_polars_yet: pytest.MonkeyPatch, command: str) -> None:
    tune_for([command, "--input", "x.parquet"])
    assert os.environ[SETTING] == TABLE_STAGE_OPTIONS


@pytest.mark.parametrize("argv", [["infer", "--backend", "echo"], ["run", "plan.yaml"], ["merge", "--input", "x"],
                                  ["--help"], []])
def test_other_commands_are_left_alone(no_polars_yet: pytest.MonkeyPatch, argv: list[str]) -> None:
    tune_for(argv)
    assert SETTING not in os.environ


def test_the_users_options_are_kept_and_polars_own_defaults_are_not_the_users(no_polars_yet: pytest.MonkeyPatch
                                                                            ) -> None:
    no_polars_yet.setenv(SETTING, "dirty_decay_ms:0")
    tune_for(["score"])
    assert os.environ[SETTING] == "dirty_decay_ms:0"
    no_polars_yet.setenv(SETTING, POLARS_DEFAULTS)  # inherited from a parent process that imported polars
    tune_for(["score"])
    assert os.environ[SETTING] == TABLE_STAGE_OPTIONS


def test_too_late_once_polars_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import polars  # noqa: F401  (loaded: jemalloc read its settings already)

    monkeypatch.delenv(SETTING, raising=False)
    tune_for(["score"])
    assert SETTING not in os.environ


def test_polars_loads_with_the_options_in_a_stage_process(tmp_path: Path) -> None:
    """In a real process: polars' own defaults first, then these, which jemalloc reads last and so applies."""
    code = ("import os, sys; from mmbatch.cli import main; "
            "main(['score', '--input', sys.argv[1], '--output', sys.argv[1] + '.json']); "
            "print(os.environ['_RJEM_MALLOC_CONF'])")
    (tmp_path / "x.tsv").write_text("index\tquestion\n1\tq\n", encoding="utf-8")  # refused: still the setting
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.tsv")], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, check=False)
    assert done.stdout.strip().splitlines()[-1] == f"{POLARS_DEFAULTS},{TABLE_STAGE_OPTIONS}", done.stderr


_BATCHES_OF_STRINGS = r"""
import resource, sys
from mmbatch.allocator import keep_freed_heap
if sys.argv[1] == "kept":
    assert keep_freed_heap()
faults = []
for _ in range(12):  # as the image checks take payloads: 64 strings of ~100 KB, freed before the next 64
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    batch = [bytes([65 + k % 26]) * 100_000 for k in range(64)]
    del batch
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(sum(faults[2:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                    reason="glibc's malloc")
def test_freed_batches_of_large_strings_are_reused_not_faulted_in_again() -> None:
    """With glibc's defaults each batch's 6.4 MB goes back to the system when freed and is faulted in again by the
    next (~1,600 page faults a batch); kept, the later batches fault in (almost) nothing."""
    def faults(mode: str) -> int:
        done = subprocess.run([sys.executable, "-c", _BATCHES_OF_STRINGS, mode], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).resolve().parents[1])
        return int(done.stdout)

    assert faults("default") > 10 * 1_500
    assert faults("kept") < 500
