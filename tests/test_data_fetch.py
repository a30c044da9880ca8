"""``prepare`` without ``--input``: the official file fetched into MMBATCH_DATA from a real HTTP server on 127.0.0.1.

The server serves the bundled examples under the official names; since their bytes are not the official files', the
test gives the declaration the bundled file's MD5 (the one thing that cannot exist here). Proved: a good file is
verified and used (and not fetched again), corrupted and truncated copies are refused with exit 2 and nothing left
half-written, a 404 and an unreachable server say which file to place where, an interrupted download is resumed with
an HTTP Range request, a placed file with another MD5 is refused and left alone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
from pathlib import Path

import pytest

from mmbatch.benchmarks import registry
from mmbatch.cli import main
from mmbatch.tableio import read_table
from tests.conftest import EXAMPLES
from tests.support.files_server import FilesServer

MMBENCH = (EXAMPLES / "mmbench" / "mmbench_example.tsv").read_bytes()
POPE = (EXAMPLES / "pope" / "pope_example.tsv").read_bytes()
OFFICIAL_DEV_MD5 = "b6caf1133a01c6bb705cf753bb527ed8"


def md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data folder, and the declarations of mmbench and pope expecting the bundled examples' MD5s."""
    folder = tmp_path / "data"
    monkeypatch.setenv("MMBATCH_DATA", str(folder))
    table = dict(registry._by_name())
    for name, file, payload in (("mmbench", "MMBench_DEV_EN.tsv", MMBENCH), ("pope", "POPE.tsv", POPE)):
        declared = table[name]
        sources = tuple(dataclasses.replace(s, md5=md5(payload)) if s.file == file else s for s in declared.sources)
        table[name] = dataclasses.replace(declared, sources=sources)
    monkeypatch.setattr(registry, "_by_name", lambda: table)
    return folder


def run(argv: list[str]) -> tuple[int, str]:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        status = main(argv)
    return status, stream.getvalue()


def prepare_dev(output: Path) -> tuple[int, str]:
    return run(["prepare", "--benchmark", "mmbench", "--split", "dev", "--output", str(output)])


def test_a_good_file_is_fetched_verified_used_and_not_fetched_again(data: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with FilesServer({"MMBench_DEV_EN.tsv": MMBENCH}) as server:
        monkeypatch.setenv("MMBATCH_DATA_MIRROR", server.base_url)
        status, log = prepare_dev(tmp_path / "fetched.parquet")
        assert status == 0, log
        assert (data / "mmbench" / "MMBench_DEV_EN.tsv").read_bytes() == MMBENCH
        assert sorted(p.name for p in (data / "mmbench").iterdir()) == ["MMBench_DEV_EN.tsv",
                                                                        "MMBench_DEV_EN.tsv.md5.json"]
        assert len(server.requests) == 1
        status, log = prepare_dev(tmp_path / "again.parquet")
        assert status == 0 and len(server.requests) == 1, "a verified file is used as it is"
    example = EXAMPLES / "mmbench" / "mmbench_example.tsv"
    status, log = run(["prepare", "--benchmark", "mmbench", "--input", str(example), "--output",
                       str(tmp_path / "given.parquet")])
    assert status == 0, log
    fetched, given = read_table(tmp_path / "fetched.parquet"), read_table(tmp_path / "given.parquet")
    assert fetched.frame.equals(given.frame)
    assert fetched.metadata["prepare"]["source"] == {
        "split": "dev", "file": "MMBench_DEV_EN.tsv", "md5": md5(MMBENCH),
        "url": "https://opencompass.openxlab.space/utils/benchmarks/MMBench/MMBench_DEV_EN.tsv"}


@pytest.mark.parametrize("served", [MMBENCH[:5000] + b"X" + MMBENCH[5001:], MMBENCH[: len(MMBENCH) // 2]],
                         ids=["corrupted", "truncated"])
def test_a_corrupted_or_truncated_file_is_refused_and_nothing_is_left(data: Path, tmp_path: Path, served: bytes,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with FilesServer({"MMBench_DEV_EN.tsv": served}) as server:
        monkeypatch.setenv("MMBATCH_DATA_MIRROR", server.base_url)
        status, log = prepare_dev(tmp_path / "p.parquet")
    assert status == 2, log
    assert f"has MD5 {md5(served)}, not the published {md5(MMBENCH)}" in log and "it was deleted" in log
    assert list((data / "mmbench").iterdir()) == [], "no file, no part, no record"
    assert not (tmp_path / "p.parquet").exists()


def test_a_404_says_which_file_to_place_where(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = data / "mmbench" / "MMBench_DEV_EN.tsv"
    with FilesServer({}) as server:
        monkeypatch.setenv("MMBATCH_DATA_MIRROR", server.base_url)
        status, log = prepare_dev(tmp_path / "p.parquet")
    assert status == 2 and "HTTP 404" in log
    assert f"place MMBench_DEV_EN.tsv (MD5 {md5(MMBENCH)}, published at https://opencompass" in log
    assert f"at {target}, or pass --input" in log


def test_offline_says_which_file_to_place_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the real declaration: the official MD5 is named."""
    target = tmp_path / "data" / "mmbench" / "MMBench_DEV_EN.tsv"
    monkeypatch.setenv("MMBATCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("MMBATCH_DATA_MIRROR", "http://127.0.0.1:9")  # the discard port: nothing listens
    status, log = prepare_dev(tmp_path / "p.parquet")
    assert status == 2 and "cannot reach http://127.0.0.1:9/MMBench_DEV_EN.tsv" in log
    assert f"Without a network: place MMBench_DEV_EN.tsv (MD5 {OFFICIAL_DEV_MD5}" in log and str(target) in log
    assert not target.exists() and "Traceback" not in log


def test_an_interrupted_download_is_resumed_with_a_range_request(data: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    part = data / "mmbench" / "MMBench_DEV_EN.tsv.part"
    with FilesServer({"MMBench_DEV_EN.tsv": MMBENCH}, cut_first={"MMBench_DEV_EN.tsv": 10_000}) as server:
        monkeypatch.setenv("MMBATCH_DATA_MIRROR", server.base_url)
        status, log = prepare_dev(tmp_path / "p.parquet")
        assert status == 2, log
        assert f"stopped at 10,000 of {len(MMBENCH):,} bytes" in log and "rerun to resume" in log
        assert part.read_bytes() == MMBENCH[:10_000]
        assert not (data / "mmbench" / "MMBench_DEV_EN.tsv").exists()
        status, log = prepare_dev(tmp_path / "p.parquet")
        assert status == 0, log
        assert server.requests == [("/MMBench_DEV_EN.tsv", None), ("/MMBench_DEV_EN.tsv", "bytes=10000-")]
    assert (data / "mmbench" / "MMBench_DEV_EN.tsv").read_bytes() == MMBENCH and not part.exists()


def test_a_placed_file_with_another_md5_is_refused_and_left_alone(data: Path, tmp_path: Path) -> None:
    placed = data / "mmbench" / "MMBench_DEV_EN.tsv"
    placed.parent.mkdir(parents=True)
    placed.write_bytes(POPE)
    status, log = prepare_dev(tmp_path / "p.parquet")
    assert status == 2 and f"its MD5 is {md5(POPE)}, not the published {md5(MMBENCH)}" in log
    assert placed.read_bytes() == POPE


def test_splits_and_files_mmbatch_does_not_download(data: Path, tmp_path: Path) -> None:
    status, log = run(["prepare", "--benchmark", "mmbench", "--split", "nosuch", "--output", str(tmp_path / "p.tsv")])
    assert status == 2 and "mmbench has no split 'nosuch'; its splits are dev, test, dev-cn" in log
    status, log = run(["prepare", "--benchmark", "seedbench", "--output", str(tmp_path / "p.tsv")])
    assert status == 2 and "mmbatch does not download SEED-Bench.json" in log
    assert f"Place it at {data / 'seedbench' / 'SEED-Bench.json'}" in log
    status, log = run(["prepare", "--benchmark", "mme", "--split", "test", "--input", str(EXAMPLES / "mme"),
                       "--output", str(tmp_path / "p.tsv")])
    assert status == 2 and "not both" in log


def test_a_plan_and_the_one_line_form_fetch_their_benchmarks(data: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("output: out\nmodels: [{backend: echo, model: answer}]\n"
                    "benchmarks: [{benchmark: mmbench, split: dev, limit: 3}, {benchmark: pope}]\n"
                    "extract: {no_judge: true}\n")
    with FilesServer({"MMBench_DEV_EN.tsv": MMBENCH, "POPE.tsv": POPE}) as server:
        monkeypatch.setenv("MMBATCH_DATA_MIRROR", server.base_url)
        status, log = run(["run", "--plan", str(plan)])
        assert status == 0, log
        assert (tmp_path / "out" / "models" / "answer" / "mmbench-dev" / "metrics.json").is_file()
        status, log = run(["run", "--benchmark", "mmbench,pope", "--backend", "echo", "--model", "answer",
                           "--model", "letter:B", "--no-judge", "--limit", "2", "--output-dir",
                           str(tmp_path / "oneline")])
        assert status == 0, log
        assert len(server.requests) == 2, "each file is fetched once for both runs"
    assert sorted(p.name for p in (tmp_path / "oneline" / "models").iterdir()) == ["answer", "letter-B"]


@pytest.mark.parametrize("declared", registry.BUILT_IN, ids=lambda b: b.name)
def test_declared_sources_are_well_formed(declared: registry.Benchmark) -> None:
    import re

    from mmbatch.benchmarks.vlmevalkit_files import FILES

    splits = [source.split for source in declared.sources]
    assert splits and len(set(splits)) == len(splits)
    for source in declared.sources:
        assert source.md5 is None or re.fullmatch(r"[0-9a-f]{32}", source.md5)
        assert source.md5 is not None or source.how_to_get, "a file mmbatch does not fetch says how to get it"
        name = source.file.rsplit(".", 1)[0]
        if source.url in {url for url, _ in FILES.values()}:
            # a VLMEvalKit file: its dataset name is one the benchmark's VLMEvalKit import recognises
            assert name.lower() in declared.vlmevalkit_names, (name, declared.vlmevalkit_names)
