"""``infer --executor ray`` on a real Ray cluster: the local executor's file, resume through kills, exit 2 without Ray.

One local cluster (2 CPUs, every address on 127.0.0.1) serves every test of this module: it is started once by the
``ray_cluster`` fixture in this process and stopped at the end. In-process runs join it as the Python API would (Ray
already initialised); the runs killed with SIGKILL are real driver processes that join it by ``--ray-address``. The
tiny random-weight LLaVA goes through the real loading code in each actor.

Equality is exact: the actor holds 1 CPU, so torch runs it on one thread; the local reference runs on one thread too
(float sums taken in another order differ in the last bits).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import psutil
import pytest

from mmbatch.cli import main
from mmbatch.journal import committed_rows, partial_dir
from mmbatch.tableio import read_metadata, read_table
from tests.conftest import REPO_ROOT
from tests.support.prepared_files import prepared_frame, write_prepared
from tests.support.tiny_models import session_model_dir

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

BROKEN = 1_000_005
"""The row whose image cannot be found."""
ACTOR_TITLE = "BackendActor"
"""Ray names an actor's worker process after its class (``ray::MapWorker(MapBatches(BackendActor))``)."""


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One local Ray cluster for the session, on 127.0.0.1 only; its GCS address."""
    # Read by Ray when it is imported: a cluster it starts then listens on the loopback address only.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    assert "ray" not in sys.modules or _ray_constants_loopback(), "ray was imported before this fixture set it"
    ray = pytest.importorskip("ray", reason="the ray extra (make install installs it)")

    # Unix socket paths are short: a folder of its own under /tmp, not pytest's deep temporary base.
    temp_dir = Path(os.path.join("/tmp", f"mmbatch-ray-{os.getpid()}"))
    ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, _temp_dir=str(temp_dir), configure_logging=False)
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)


def _ray_constants_loopback() -> bool:
    from ray._private import ray_constants

    return not ray_constants.ENABLE_RAY_CLUSTER


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_model_dir(tmp_path_factory, "llava")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generated and likelihood rows, circular copies whose ``image`` refers to another row, and a copy whose
    reference names no row (a failed row: exit 3)."""
    frame = prepared_frame(16, copies=3).with_columns(
        pl.when(pl.col("g_index") % 4 == 0).then(pl.lit("likelihood")).otherwise(pl.lit("generate")).alias("mode"))
    frame = frame.with_columns(pl.when(pl.col("index") == BROKEN).then(pl.lit("999999"))
                               .otherwise(pl.col("image")).alias("image"))
    return write_prepared(tmp_path_factory.mktemp("ray-prepared") / "prepared.parquet", frame)


@pytest.fixture(scope="module")
def local_file(tiny_llava: Path, prepared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The local executor's predictions file, made on one thread as an actor of 1 CPU runs."""
    import torch

    output = tmp_path_factory.mktemp("ray-local") / "predictions.parquet"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert main(infer_args(tiny_llava, prepared, output)) == 3
    finally:
        torch.set_num_threads(threads)
    return output


@pytest.fixture(scope="module")
def local_output(local_file: Path) -> pl.DataFrame:
    return read_table(local_file).frame


def infer_args(model: Path, prepared: Path, output: Path, *extra: str) -> list[str]:
    return ["infer", "--input", str(prepared), "--output", str(output), "--backend", "hf", "--model", str(model),
            "--device", "cpu", "--dtype", "float32", "--max-new-tokens", "4", "--batch-size", "2", *extra]


def ray_args(address: str | None = None) -> list[str]:
    """One actor of 1 CPU and decoding tasks of half a CPU: the whole pool fits the 2-CPU cluster."""
    return ["--executor", "ray", *(["--ray-address", address] if address else []), "--ray-decode-cpus", "0.5"]


def same_rows(output: Path, expected: pl.DataFrame) -> None:
    """Every row once, with the local executor's answers and scores (``latency_ms`` is a time, not an answer)."""
    frame = read_table(output).frame
    assert frame["index"].is_unique().all() and frame.height == expected.height
    assert frame.drop("latency_ms").equals(expected.drop("latency_ms"))


def test_ray_executor_writes_the_local_executors_file(ray_cluster: str, tiny_llava: Path, prepared: Path,
                                                       local_file: Path, local_output: pl.DataFrame, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    listening = _listening_addresses()
    assert listening and all(address in ("127.0.0.1", "::ffff:127.0.0.1") for address in listening), listening

    output = tmp_path / "predictions.parquet"
    assert main(infer_args(tiny_llava, prepared, output, *ray_args())) == 3  # the broken image, as locally
    same_rows(output, local_output)
    assert f"infer: failed row index={BROKEN}: column 'image': refers to index '999999'" in capsys.readouterr().out
    infer, local = read_metadata(output)["infer"], read_metadata(local_file)["infer"]
    assert infer["executor"]["name"] == "ray" and infer["executor"]["actors"] == 1
    assert infer["backend_settings"]["model"] == str(tiny_llava) and infer["resume"]["backend"] == "hf"
    assert local["resume"] == infer["resume"] and local["backend_settings"] == infer["backend_settings"]
    assert local["executor"] == "local" and local["row_counts"] == infer["row_counts"]

    # The settings digest does not name the executor: the local executor resumes the Ray run's file (nothing to do).
    assert main(infer_args(tiny_llava, prepared, output)) == 3
    assert "47 already done, 1 to run" in capsys.readouterr().err


def test_killed_actor_and_killed_driver_lose_no_row(ray_cluster: str, tiny_llava: Path, prepared: Path,
                                                    local_output: pl.DataFrame, tmp_path: Path) -> None:
    """SIGKILL the actor's process mid-run (Ray restarts it and retries its chunk, which the log names), then the
    driver (its job ends); the rerun redoes only the rows not committed, and the file is the local one.

    A kill that lands between two chunks (the actor had answered its chunk) retries nothing, and the run may end
    before the driver is killed: its file must still be the local one, and the run is tried again, up to three
    times."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    for attempt in range(3):
        output, log = tmp_path / f"predictions-{attempt}.parquet", tmp_path / f"driver-{attempt}.log"
        command = [sys.executable, "-m", "mmbatch", *infer_args(tiny_llava, prepared, output,
                                                                 *ray_args(ray_cluster))]
        with log.open("w") as sink:
            driver = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=REPO_ROOT)
            try:
                before_actor_kill = wait_for_commits(output, 2, driver, log)
                assert before_actor_kill is not None
                actor = actor_process()
                actor.send_signal(signal.SIGKILL)
                before_driver_kill = wait_for_commits(output, before_actor_kill + 1, driver, log, retried=True,
                                                      end_allowed=True)
                if before_driver_kill is not None:
                    driver.send_signal(signal.SIGKILL)
                driver.wait(timeout=600)
            finally:
                if driver.poll() is None:
                    driver.kill()
                    driver.wait()
        if before_driver_kill is not None:
            break
        same_rows(output, local_output)  # the kill retried nothing and the run ended: still the local file
    assert before_driver_kill is not None, "no kill landed inside a chunk in three runs"
    text = log.read_text()
    assert "infer: retrying" in text and f"(pid {actor.pid} on " in text, text[-3000:]
    assert not output.exists()  # killed before the end: only the progress folder holds rows

    committed = committed_rows(partial_dir(output))
    assert committed is not None
    done = committed.filter(pl.col("error").is_null())["index"].unique()
    assert done.len() >= before_driver_kill - 1
    assert stale_rows(committed, local_output) == []  # every committed row holds the local answer already

    rerun = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=600)
    assert rerun.returncode == 3, rerun.stderr[-3000:]
    remaining = local_output.height - done.len()
    assert f"{done.len()} already done, {remaining} to run" in rerun.stderr
    same_rows(output, local_output)


def test_a_killed_actors_retried_chunk_is_counted_once(ray_cluster: str, tiny_llava: Path, prepared: Path,
                                                       local_file: Path, local_output: pl.DataFrame,
                                                       tmp_path: Path) -> None:
    """SIGKILL the actor mid-chunk and let the run finish: Ray retries the chunk on a new actor and drops the outputs
    the lost attempt had returned; the file and the recorded row counts are the local run's (each committed result
    list counted once, not the two actors' running totals added up).

    A kill that lands between two chunks (the actor had answered its chunk; a starved test process sees the commits
    late) retries nothing: the file and counts must still be the local ones, and the run is tried again, up to three
    times, until a kill lands inside a chunk."""
    retried = False
    for attempt in range(3):
        output, log = tmp_path / f"predictions-{attempt}.parquet", tmp_path / f"driver-{attempt}.log"
        _run_and_kill_the_actor(ray_cluster, tiny_llava, prepared, output, log)
        same_rows(output, local_output)
        assert read_metadata(output)["infer"]["row_counts"] == read_metadata(local_file)["infer"]["row_counts"]
        retried = "infer: retrying" in log.read_text()
        if retried:
            break
    assert retried, "no kill landed inside a chunk in three runs"


def _run_and_kill_the_actor(address: str, model: Path, prepared: Path, output: Path, log: Path) -> None:
    """Run the Ray executor in a driver process, SIGKILL its actor once rows are committed, wait for the end."""
    command = [sys.executable, "-m", "mmbatch", *infer_args(model, prepared, output, *ray_args(address))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    with log.open("w") as sink:
        driver = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=REPO_ROOT)
        try:
            wait_for_commits(output, 2, driver, log)  # the first chunk's first result list is in, the chunk is not
            actor_process().send_signal(signal.SIGKILL)
            assert driver.wait(timeout=600) == 3, log.read_text()[-3000:]  # the broken image, as locally
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()


def test_without_ray_exit_2_with_the_install_command(tiny_llava: Path, prepared: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` finds when the extra is not installed
    output = tmp_path / "predictions.parquet"
    assert main(infer_args(tiny_llava, prepared, output, "--executor", "ray")) == 2
    assert "pip install 'mmbatch[ray]'" in capsys.readouterr().err
    assert not partial_dir(output).exists()  # refused before any row: no progress folder left


def test_ray_options_without_the_ray_executor_are_refused(tiny_llava: Path, prepared: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "predictions.parquet"
    assert main(infer_args(tiny_llava, prepared, output, "--ray-actors", "4")) == 2
    assert "apply to --executor ray only" in capsys.readouterr().err


def stale_rows(committed: pl.DataFrame, expected: pl.DataFrame) -> list[int]:
    """Indices of committed rows (every copy) whose prediction columns differ from ``expected``'s."""
    columns = [name for name in expected.columns if name in committed.columns and name not in ("index", "latency_ms")]
    both = committed.join(expected, on="index", how="left", suffix="_expected")
    # Stage files store empty text as null (tableio's one rule); the journal keeps what the backend returned.
    both = both.with_columns(pl.col(pl.String).replace("", None))
    differs = pl.any_horizontal([pl.col(name).ne_missing(pl.col(f"{name}_expected")) for name in columns])
    return both.filter(differs)["index"].to_list()


def wait_for_commits(output: Path, rows: int, driver: subprocess.Popen[Any], log: Path, *, retried: bool = False,
                     end_allowed: bool = False, timeout: float = 300) -> int | None:
    """Wait until at least ``rows`` rows are committed (and, with ``retried``, the log names a retry); the count.
    None when the run ended first and ``end_allowed`` (otherwise that fails the test)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if driver.poll() is not None:
            assert end_allowed, f"the run ended before the kill: {log.read_text()[-4000:]}"
            return None
        committed = committed_rows(partial_dir(output))
        count = 0 if committed is None else committed["index"].n_unique()
        if count >= rows and (not retried or "retrying" in log.read_text()):
            return count
        time.sleep(0.2)
    raise AssertionError(f"fewer than {rows} rows committed after {timeout} s")


def actor_process() -> psutil.Process:
    """The backend actor's worker process: a descendant of this process (which started the cluster)."""
    found = [child for child in psutil.Process().children(recursive=True) if ACTOR_TITLE in _title(child)]
    assert len(found) == 1, [_title(child) for child in psutil.Process().children(recursive=True)]
    return found[0]


def _title(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _listening_addresses() -> set[str]:
    """The addresses that the cluster's processes (this process's descendants) listen on."""
    ours = {child.pid for child in psutil.Process().children(recursive=True)}
    return {connection.laddr.ip for connection in psutil.net_connections(kind="inet")
            if connection.status == psutil.CONN_LISTEN and connection.pid in ours}
