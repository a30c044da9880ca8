"""What `make demo` (examples/demo.sh) is made of, checked without running its tiny-model inference: its
plan covers every bundled example (four answer kinds, the judge-graded one included, with the judge), and
its stand-in judge (examples/stand_in_judge.sh) is a real server on 127.0.0.1 that no way of ending the demo leaves
running: a normal end, an error, kill -9, or a server that cannot start (a bounded wait, then a loud failure)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from mmbatch.plans.read import read_plan
from tests.conftest import EXAMPLES, REPO_ROOT

BUNDLED_BENCHMARKS = {"mmbench": "mmbench", "mme": "mme", "seedbench": "seed", "seedbench2": "seed", "pope": "pope",
                      "textvqa": "textvqa", "mmvet": "mmvet"}
"""Each benchmark of the demo plan and the examples/ folder its bundled input is in."""


def test_the_demo_plan_runs_every_bundled_example_with_the_judge() -> None:
    plan = read_plan(EXAMPLES / "demo-plan.yaml")
    inputs = {entry.benchmark: Path(entry.prepare["input"]) for entry in plan.benchmarks}
    assert inputs.keys() == BUNDLED_BENCHMARKS.keys()
    for benchmark, path in inputs.items():
        assert path.exists() and path.is_relative_to(EXAMPLES / BUNDLED_BENCHMARKS[benchmark]), benchmark
    example_folders = {p.name for p in EXAMPLES.iterdir() if p.is_dir() and any(p.glob("*example*"))}
    assert example_folders <= set(BUNDLED_BENCHMARKS.values()), "a bundled example the demo does not run"
    for entry in plan.benchmarks:  # MMBench's leftovers and MM-Vet's grades need the judge: no plan-wide --no-judge
        assert entry.extract.get("judge_model") and not entry.extract.get("no_judge"), entry.name
    script = (EXAMPLES / "demo.sh").read_text()
    assert 'MMBATCH_JUDGE_BASE_URL="$judge_url"' in script and "examples/textvqa_demo.sh" in script


def judge_script(folder: Path, then: str, port: int = 0) -> subprocess.Popen[str]:
    """bash sourcing the judge helper as the demo does, printing the server's pid and URL, then running ``then``."""
    command = (f"set -euo pipefail; source examples/stand_in_judge.sh; start_judge_server {folder} {port}; "
               f"echo \"$judge_pid $judge_url\"; {then}")
    return subprocess.Popen(["bash", "-c", command], cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "JUDGE_START_S": "20"})


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for a reaper has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def ends_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not running(pid)


def started(script: subprocess.Popen[str]) -> tuple[int, str]:
    assert script.stdout is not None
    pid, url = script.stdout.readline().split()
    return int(pid), url


def grade(url: str) -> str:
    """The stand-in judge's MM-Vet grade of a prediction holding the whole truth, over real HTTP."""
    prompt = "Just complete the last space of the correctness score.\nWhat is it? | red <AND> car | a red car | "
    body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]}).encode()
    request = urllib.request.Request(f"{url}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(json.loads(response.read())["choices"][0]["message"]["content"])


@pytest.mark.parametrize("ending", ["exit 0", "false"])
def test_the_judge_serves_and_stops_when_the_demo_ends(tmp_path: Path, ending: str) -> None:
    script = judge_script(tmp_path, f"read -r _; {ending}")
    pid, url = started(script)
    try:
        assert url.startswith("http://127.0.0.1:") and grade(url) == "1.0"
    finally:
        script.communicate("\n", timeout=30)  # the script goes on: its end (or its error) runs the exit trap
    assert script.returncode == (0 if ending == "exit 0" else 1)
    assert ends_within(pid, 10), "the judge outlived the demo"


def test_the_judge_ends_by_itself_when_the_demo_is_killed(tmp_path: Path) -> None:
    script = judge_script(tmp_path, "read -r _")  # read is a builtin: killing bash leaves no other child behind
    pid, url = started(script)
    try:
        assert grade(url) == "1.0"
        script.kill()  # SIGKILL: no trap runs
        script.wait(timeout=10)
        assert ends_within(pid, 10), "the judge outlived a killed demo"
    finally:
        if running(pid):
            subprocess.run(["kill", str(pid)], check=False)
        script.communicate(timeout=10)


def test_a_judge_that_cannot_start_fails_the_demo_at_once(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        script = judge_script(tmp_path, "echo unreachable", port=taken.getsockname()[1])
        out, err = script.communicate(timeout=60)
    assert script.returncode == 1 and "unreachable" not in out
    assert "the stand-in judge did not start" in err and "Address already in use" in err
