"""Test models are built once even when parallel workers (``pytest -n``) ask for the same one at the same time."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.build_once import build_once


def slow_builder(log: Path) -> Callable[[Path], None]:
    """A builder that logs each build and takes a second, so that a second process arrives while it runs."""
    def build(staging: Path) -> None:
        with log.open("a") as handle:
            handle.write("built\n")
        time.sleep(1.0)
        (staging / "config.json").write_text("{}")

    return build


def build_in_child(directory: str, log: str) -> None:
    build_once(Path(directory), slow_builder(Path(log)), finished_marker="config.json")


def test_two_processes_asking_at_once_build_the_model_once(tmp_path: Path) -> None:
    directory, log = tmp_path / "models" / "tiny", tmp_path / "builds.log"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=build_in_child, args=(str(directory), str(log))) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    assert log.read_text().splitlines() == ["built"]
    assert (directory / "config.json").is_file()
    assert sorted(p.name for p in directory.parent.iterdir()) == ["tiny"]  # no staging folder, no lock file left
