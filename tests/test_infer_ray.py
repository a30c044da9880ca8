"""``infer --executor ray`` on a real Ray cluster: the local executor's file, resume through kills, exit 2 without Ray.

One local cluster (2 CPUs, every address on 127.0.0.1) serves every test of this module: it is started once by the
``ray_cluster`` fixture in this process and stopped at the end. In-process runs join it as the Python API would (Ray
already initialised); the runs killed with SIGKILL are real driver processes that join it by ``--ray-address``. The
tiny random-weight LLaVA goes through the real loading code in each actor.

Equality is exact: the actor holds 1 CPU, so torch runs it on one thread; the local reference runs on one thread too
(float sums taken in another order differ in the last bits).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import polars as pl
import psutil
import pytest

from mmbatch.cli import main
from mmbatch.infer.on_ray.work import LEDGER_NAMESPACE
from mmbatch.journal import committed_rows, partial_dir
from mmbatch.tableio import read_metadata, read_table
from tests.conftest import REPO_ROOT
from tests.support.prepared_files import prepared_frame, write_prepared
from tests.support.tiny_models import session_model_dir

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

BROKEN = 1_000_005
"""The row whose image cannot be found."""


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
    """SIGKILL the actor's process inside a chunk (Ray restarts it and retries the chunk, which the log names), then
    the driver while the new actor is inside a chunk (the run cannot have ended); the rerun redoes only the rows not
    committed, and the file is the local one."""
    output, log = tmp_path / "predictions.parquet", tmp_path / "driver.log"
    command = [sys.executable, "-m", "mmbatch", *infer_args(tiny_llava, prepared, output, *ray_args(ray_cluster))]
    seen: dict[str, int] = {}

    def rows_committed() -> bool:
        seen["before_actor_kill"] = committed_count(output)
        return seen["before_actor_kill"] >= 2

    def committed_since_kill() -> bool:
        seen["before_driver_kill"] = committed_count(output)
        return "infer: retrying" in log.read_text() and seen["before_driver_kill"] > seen["before_actor_kill"]

    with running_driver(command, log) as driver:
        # Chunk 0, the longest (32 rows in 4 result lists): its retry leaves the new actor lists and chunks to
        # answer, while which the driver is killed.
        actor = act_inside_a_chunk(driver, log, psutil.Process.kill, ready=rows_committed, chunk=0)
        act_inside_a_chunk(driver, log, lambda _: driver.kill(), ready=committed_since_kill, other_than=actor.pid)
        driver.wait(timeout=60)
    text = log.read_text()
    assert "infer: retrying" in text and f"(pid {actor.pid} on " in text, text[-3000:]
    assert not output.exists()  # killed before the end: only the progress folder holds rows

    committed = committed_rows(partial_dir(output))
    assert committed is not None
    done = committed.filter(pl.col("error").is_null())["index"].unique()
    assert done.len() >= seen["before_driver_kill"] - 1  # the broken image's row is committed as failed
    assert stale_rows(committed, local_output) == []  # every committed row holds the local answer already

    rerun = subprocess.run(command, capture_output=True, text=True, env=driver_env(), cwd=REPO_ROOT, timeout=600)
    assert rerun.returncode == 3, rerun.stderr[-3000:]
    remaining = local_output.height - done.len()
    assert f"{done.len()} already done, {remaining} to run" in rerun.stderr
    same_rows(output, local_output)


def test_a_killed_actors_retried_chunk_is_counted_once(ray_cluster: str, tiny_llava: Path, prepared: Path,
                                                       local_file: Path, local_output: pl.DataFrame,
                                                       tmp_path: Path) -> None:
    """SIGKILL the actor inside a chunk and let the run finish: Ray retries the chunk on a new actor and drops the
    outputs the lost attempt had returned; the file and the recorded row counts are the local run's (each committed
    result list counted once, not the two actors' running totals added up)."""
    output, log = tmp_path / "predictions.parquet", tmp_path / "driver.log"
    command = [sys.executable, "-m", "mmbatch", *infer_args(tiny_llava, prepared, output, *ray_args(ray_cluster))]
    with running_driver(command, log) as driver:
        # Once the first result list is committed: the retried chunk (the longest) holds rows committed already.
        act_inside_a_chunk(driver, log, psutil.Process.kill, ready=lambda: committed_count(output) >= 2, chunk=0)
        assert driver.wait(timeout=600) == 3, log.read_text()[-3000:]  # the broken image, as locally
    assert "infer: retrying" in log.read_text()
    same_rows(output, local_output)
    assert read_metadata(output)["infer"]["row_counts"] == read_metadata(local_file)["infer"]["row_counts"]


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


def driver_env() -> dict[str, str]:
    """The environment of a driver process: this checkout first on the path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}


@contextlib.contextmanager
def running_driver(command: list[str], log: Path) -> Iterator[subprocess.Popen[Any]]:
    """A driver process running ``command``, its output in ``log``; killed on the way out if still running."""
    with log.open("w") as sink:
        driver = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=driver_env(), cwd=REPO_ROOT)
        try:
            yield driver
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()


def committed_count(output: Path) -> int:
    """Rows committed to the progress folder of ``output`` so far."""
    committed = committed_rows(partial_dir(output))
    return 0 if committed is None else int(committed["index"].n_unique())


def act_inside_a_chunk(driver: subprocess.Popen[Any], log: Path, act: Callable[[psutil.Process], object], *,
                       ready: Callable[[], bool], chunk: int | None = None, other_than: int | None = None,
                       timeout: float = 300) -> psutil.Process:
    """Run ``act`` on a backend actor's process while that actor is stopped inside a chunk (``chunk``, when given)
    and ``ready()`` holds; the actor.

    Every ~50 ms the run's attempts ledgers name the workers answering a chunk (begun, its last result list not
    sent); such a worker is stopped (SIGSTOP) and held for up to a second while ``ready()`` is polled (the driver
    sees result lists late, as Ray Data hands them over in batches, so it catches up meanwhile); then ``act`` runs,
    or the worker goes on (SIGCONT). An actor stopped there holds the run: it cannot end before ``act``, and a
    SIGKILL then is certain to make Ray retry the chunk and deliver a list the driver had not had, which names the
    retry. So the test does not depend on how fast the actor answers compared with how often this process gets a
    core. ``other_than``: a killed actor's pid, never chosen again.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert driver.poll() is None, f"the run ended first: {log.read_text()[-3000:]}"
        for number, pid in _answering_workers(driver).items():
            if pid == other_than or chunk not in (None, number):
                continue
            try:
                actor = psutil.Process(pid)
                actor.suspend()
            except psutil.NoSuchProcess:  # ended since the ledger named it (a lost attempt stays named until retried)
                continue
            try:
                held_until = time.monotonic() + 1.0
                # Stopped, it stays in the ledger (it alone could take itself out), unless it was taking itself out.
                while _answering_workers(driver).get(number) == pid and time.monotonic() < held_until:
                    if ready():
                        act(actor)
                        return actor
                    time.sleep(0.05)
            finally:
                with contextlib.suppress(psutil.NoSuchProcess):
                    actor.resume()
        time.sleep(0.05)
    raise AssertionError(f"no actor was seen inside a chunk in {timeout} s: {log.read_text()[-3000:]}")


def _answering_workers(driver: subprocess.Popen[Any]) -> dict[int, int]:
    """Chunk -> pid of the actor answering it, as the driver's attempts ledgers (one per pass over the rows, named
    after the driver's pid) say; a pass that ended has killed its ledger."""
    import ray

    answering: dict[int, int] = {}
    for named in ray.util.list_named_actors(all_namespaces=True):
        if named["namespace"] != LEDGER_NAMESPACE or not named["name"].startswith(f"attempts-{driver.pid}-"):
            continue
        with contextlib.suppress(ray.exceptions.RayActorError, ValueError):  # ended, or gone since listed
            ledger = ray.get_actor(named["name"], namespace=LEDGER_NAMESPACE)
            workers = cast(dict[int, str], ray.get(ledger.answering.remote()))
            answering |= {number: int(worker.split()[1]) for number, worker in workers.items()}  # "pid N on host"
    return answering


def _listening_addresses() -> set[str]:
    """The addresses that the cluster's processes (this process's descendants) listen on."""
    ours = {child.pid for child in psutil.Process().children(recursive=True)}
    return {connection.laddr.ip for connection in psutil.net_connections(kind="inet")
            if connection.status == psutil.CONN_LISTEN and connection.pid in ours}
