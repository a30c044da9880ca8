"""examples/pipeline.sh runs every benchmark kind it offers on its bundled example (issue 25 item 1): an MCQ, a yes/no,
SEED-Bench with its media folder, a VQA-scored and a judge-graded benchmark (the judge a local server), with the local
install and as the ``docker run`` commands it issues, replayed by the stand-in ``docker``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.support.openai_server import OpenAIServer
from tests.support.recipe_cases import CASE_IDS, JUDGE_MODEL, assert_expected_metrics, case, judge_server
from tests.test_pipeline_script import SECRET, docker_calls, out_dir, run_pipeline

__all__ = ["judge_server", "out_dir"]  # fixtures, used by name


def pipeline_settings(kind: str, server: OpenAIServer) -> dict[str, str]:
    """The settings a user gives pipeline.sh for the case: its benchmark, input, media folder and judge."""
    recipe_case = case(kind)
    env = {"BENCHMARK": recipe_case.benchmark, "INPUT": recipe_case.input, "MODEL": recipe_case.model}
    if recipe_case.media_root:
        env["MEDIA_ROOT"] = recipe_case.media_root
    if recipe_case.judged:
        env.update(JUDGE_MODEL=JUDGE_MODEL, JUDGE_BASE_URL=server.base_url)
    return env


def test_seed_with_its_media_folder_runs_through_the_pipeline(out_dir: str, tmp_path: Path) -> None:
    """The issue's command: prepare exited 2 (media not found) and infer refused the media root."""
    env = {"MMBATCH_NO_DOCKER": "1", "BENCHMARK": "seedbench", "INPUT": "examples/seed/seed_example.json",
           "MEDIA_ROOT": "examples/seed/media"}
    result = run_pipeline(out_dir, env, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_expected_metrics(case("seed-media"), REPO_ROOT / out_dir / "metrics.json")


@pytest.mark.parametrize("kind", [kind for kind in CASE_IDS if kind != "seed-media"])
def test_pipeline_runs_each_benchmark_kind_without_docker(kind: str, out_dir: str, tmp_path: Path,
                                                          judge_server: OpenAIServer) -> None:
    judge_server.reset()
    result = run_pipeline(out_dir, {"MMBATCH_NO_DOCKER": "1", **pipeline_settings(kind, judge_server)}, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_expected_metrics(case(kind), REPO_ROOT / out_dir / "metrics.json")
    assert bool(judge_server.chat_requests) == case(kind).judged


@pytest.mark.parametrize("kind", ["seed-media", "judge-graded"])
def test_pipeline_containers_get_the_media_root_and_the_judge_settings(kind: str, out_dir: str, tmp_path: Path,
                                                                       judge_server: OpenAIServer) -> None:
    """Through ``docker run`` (replayed): a container sees only what its command line and ``-e`` pass, so a media
    root or judge setting the script forgets fails the stage or changes the metrics."""
    judge_server.reset()
    settings = pipeline_settings(kind, judge_server)
    if case(kind).judged:
        # Set as MMBATCH_* variables, as docs/scale.md allows: they must reach the container by name.
        settings["MMBATCH_JUDGE_MODEL"] = settings.pop("JUDGE_MODEL")
        settings["MMBATCH_JUDGE_BASE_URL"] = settings.pop("JUDGE_BASE_URL")
        settings["MMBATCH_JUDGE_API_KEY"] = SECRET
    result = run_pipeline(out_dir, {"FAKE_DOCKER_EXECUTE": "1", "MMBATCH_TIMEOUT": "30", **settings}, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_expected_metrics(case(kind), REPO_ROOT / out_dir / "metrics.json")
    calls = docker_calls(tmp_path)
    for call in calls:
        options = [tuple(option) for option in call["options"]]  # type: ignore[union-attr]
        assert ("-e", "MMBATCH_TIMEOUT") in options, "every MMBATCH_* variable reaches every container"
        assert SECRET not in json.dumps(call), "variables pass by name, never by value"
    by_stage = {call["args"][0]: call["args"] for call in calls}  # type: ignore[index]
    if case(kind).media_root:
        for stage in ("prepare", "infer", "extract"):
            assert "--media-root" in by_stage[stage], f"{stage} reads media files under MEDIA_ROOT"
    if case(kind).judged:
        assert judge_server.chat_requests, "the judge was asked"
        for call in calls:
            options = [tuple(option) for option in call["options"]]  # type: ignore[union-attr]
            assert {("-e", "MMBATCH_JUDGE_BASE_URL"), ("-e", "MMBATCH_JUDGE_API_KEY")} <= set(options)


def test_pipeline_refuses_a_judge_server_without_a_judge_model(out_dir: str, tmp_path: Path) -> None:
    result = run_pipeline(out_dir, {"MMBATCH_NO_DOCKER": "1", "JUDGE_BASE_URL": "http://judge:8000/v1"}, tmp_path)
    assert result.returncode == 2 and "JUDGE_MODEL is not" in result.stderr
    assert not (REPO_ROOT / out_dir / "prepared.parquet").exists(), "refused before any stage ran"


def test_seed_bench_2_extracts_in_the_full_image(out_dir: str, tmp_path: Path) -> None:
    """Its image-generation rows are decided by CLIP, which the light image lacks (recorded only)."""
    env = {"BENCHMARK": "seedbench2", "INPUT": "examples/seed/seed2_level3_example.json",
           "MEDIA_ROOT": "examples/seed/media"}
    result = run_pipeline(out_dir, env, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    images = {call["args"][0]: call["image"] for call in docker_calls(tmp_path)}  # type: ignore[index]
    assert images == {"prepare": "mmbatch:light", "infer": "mmbatch:full", "validate": "mmbatch:light",
                      "extract": "mmbatch:full", "score": "mmbatch:light"}
