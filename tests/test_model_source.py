"""A model that cannot be had fails at once with what to do: a mistyped local path, or a Hub id that is neither
cached nor reachable (no network here: the Hub is a closed port on 127.0.0.1, and a port that never answers)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import mmbatch.backends.model_source as model_source
from mmbatch.backends.model_source import check_model_source, looks_like_path
from mmbatch.cli import main
from mmbatch.errors import BadInputError
from tests.support.prepared_files import prepared_frame, write_prepared


@pytest.fixture
def no_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An empty Hugging Face cache, HF_HUB_OFFLINE unset, and a Hub endpoint nothing listens on."""
    with socket.socket() as probe:  # a port that was free a moment ago: connecting to it is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    yield f"http://127.0.0.1:{port}"


def infer(tmp_path: Path, model: str) -> int:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(2))
    return main(["infer", "--input", str(prepared), "--output", str(tmp_path / "out.parquet"), "--backend", "hf",
                 "--model", model, "--device", "cpu"])


def test_a_local_path_that_does_not_exist_is_exit_2_naming_it(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    missing = "./.cache/tiny-lava"  # a typo of .cache/tiny-llava
    assert infer(tmp_path, missing) == 2
    error = capsys.readouterr().err
    assert f"--model {missing}: no such folder" in error and "Repo id must be in the form" not in error


def test_an_uncached_hub_id_without_network_fails_fast_saying_what_to_do(
        tmp_path: Path, no_hub: str, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    assert infer(tmp_path, "some-org/some-vlm") == 2
    took = time.monotonic() - started
    error = capsys.readouterr().err
    assert took < 60, f"took {took:.0f} s (huggingface_hub's retries took 2 min 36 s)"
    assert "not in the Hugging Face cache and the Hub cannot be reached" in error
    assert "huggingface-cli download some-org/some-vlm" in error and "HF_HUB_OFFLINE=1" in error


def test_a_hub_that_never_answers_is_given_up_after_the_probe_timeout(
        no_hub: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setattr(model_source, "PROBE_TIMEOUT_S", 1.0)
        started = time.monotonic()
        with pytest.raises(BadInputError, match="the Hub cannot be reached"):
            check_model_source("some-org/some-vlm")
        assert time.monotonic() - started < 10


def test_offline_an_uncached_hub_id_says_so(no_hub: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BadInputError, match=r"not in the Hugging Face cache .* and HF_HUB_OFFLINE is set"):
        check_model_source("some-org/some-vlm", flag="--clip-model")


def test_cached_ids_and_existing_folders_are_left_to_the_loader(tmp_path: Path, no_hub: str) -> None:
    snapshot = tmp_path / "hf-home" / "hub" / "models--some-org--cached-vlm"
    (snapshot / "refs").mkdir(parents=True)
    (snapshot / "refs" / "main").write_text("0" * 40)
    check_model_source("some-org/cached-vlm")  # in the cache: no look-up, no error
    folder = tmp_path / "models" / "tiny"
    folder.mkdir(parents=True)
    check_model_source(str(folder))
    with pytest.raises(BadInputError, match="is a file"):
        (folder / "config.json").write_text("{}")
        check_model_source(str(folder / "config.json"))


@pytest.mark.parametrize(("value", "path"), [("llava-hf/llava-1.5-7b-hf", False), ("gpt2", False),
                                              ("/models/llava", True), ("./tiny", True), ("../tiny", True),
                                              (".cache/tiny-llava", True), ("~/models/x", True),
                                              ("a/b/c", True), ("org/name/", True)])
def test_what_counts_as_a_path(value: str, path: bool) -> None:
    assert looks_like_path(value) is path
