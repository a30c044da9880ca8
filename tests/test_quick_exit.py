"""The console script ends its process without the interpreter's teardown (mmbatch/quick_exit.py), and loses nothing.

Each case runs the real entry point in a fresh interpreter (what ends the process is the point) and checks what a
normal exit guarantees: every file and every printed line is there, the exit status is the command's, the ``atexit``
functions ran, a thread still working was waited for.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import polars as pl
import pytest

from mmbatch.quick_exit import may_skip_teardown
from tests.conftest import EXAMPLES, REPO_ROOT

ENV = {**{name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"},  # buffered, as a pipe is
       "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
       "HF_HUB_OFFLINE": "1"}


def mmbatch(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m mmbatch ARGS``, its output through pipes (block-buffered: what a lost flush would lose)."""
    return subprocess.run([sys.executable, "-m", "mmbatch", *args], capture_output=True, text=True, env=ENV,
                          cwd=REPO_ROOT, timeout=300)


def through_console(tmp_path: Path, prelude: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``mmbatch ARGS`` through :func:`mmbatch.cli.console` after ``prelude`` (Python run first in the process)."""
    script = tmp_path / "entry.py"
    script.write_text(f"import sys\n{prelude}\nfrom mmbatch.cli import console\n"
                      f"sys.argv = ['mmbatch', *{json.dumps(list(args))}]\nconsole()\n")
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=ENV, cwd=REPO_ROOT,
                          timeout=300)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled TextVQA example's predictions, extracted by the real command line."""
    folder = tmp_path_factory.mktemp("quick-exit")
    output = folder / "extracted.parquet"
    done = mmbatch("extract", "--input", str(EXAMPLES / "textvqa" / "textvqa_example_predictions.tsv"),
                   "--benchmark", "textvqa", "--output", str(output), "--no-judge")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "extract:" in done.stderr
    return output


def test_a_stage_leaves_its_files_and_its_whole_output(extracted: Path, tmp_path: Path) -> None:
    assert pl.read_parquet(extracted).height > 0
    metrics = tmp_path / "metrics.json"
    done = mmbatch("score", "--input", str(extracted), "--output", str(metrics))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Overall" in done.stdout and done.stdout.rstrip().endswith("rows")  # the table to its last line
    assert f"wrote {metrics}" in done.stderr
    rows = json.loads(metrics.read_text())
    assert [(row["metric"], row["value"]) for row in rows if row["metric"] == "acc"] == [("acc", 53.0)]
    assert pl.read_parquet(tmp_path / "metrics.hits.parquet").height == pl.read_parquet(extracted).height


def test_the_exit_status_is_the_commands(tmp_path: Path) -> None:
    done = mmbatch("score", "--input", str(tmp_path / "missing.parquet"), "--output", str(tmp_path / "m.json"))
    assert done.returncode == 2
    assert "error:" in done.stderr and "missing.parquet" in done.stderr


def test_atexit_functions_run_and_what_they_print_is_flushed(extracted: Path, tmp_path: Path) -> None:
    flag = tmp_path / "atexit-ran"
    prelude = (f"import atexit, pathlib\natexit.register(pathlib.Path({str(flag)!r}).write_text, 'ran')\n"
               "atexit.register(print, 'printed at exit', end='')")  # left in stdout's buffer, for the flush
    done = through_console(tmp_path, prelude, "score", "--input", str(extracted), "--output", str(tmp_path / "m.json"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert flag.read_text() == "ran"
    assert done.stdout.endswith("printed at exit")


def test_a_working_thread_is_waited_for(extracted: Path, tmp_path: Path) -> None:
    flag = tmp_path / "thread-finished"
    prelude = (f"import pathlib, threading, time\n"
               f"def work():\n    time.sleep(1.0)\n    pathlib.Path({str(flag)!r}).write_text('done')\n"
               f"threading.Thread(target=work).start()")
    done = through_console(tmp_path, prelude, "score", "--input", str(extracted), "--output", str(tmp_path / "m.json"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert flag.read_text() == "done"


def test_which_processes_skip_the_teardown() -> None:
    assert may_skip_teardown(["score", "--input", "x"])
    assert may_skip_teardown(["extract"])
    assert not may_skip_teardown([])
    assert not may_skip_teardown(["infer", "--backend", "vllm"])  # backends' children and devices: finalizers
    assert not may_skip_teardown(["run", "--plan", "p.yaml"])
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        assert not may_skip_teardown(["score"])
    finally:
        release.set()
        worker.join()
    assert may_skip_teardown(["score"])
    previous = sys.getprofile()
    sys.setprofile(lambda *_: None)
    try:
        assert not may_skip_teardown(["score"])  # a profiler writes its findings after the program returns
    finally:
        sys.setprofile(previous)
