"""The hf backend loads tiny offline models through AutoProcessor + AutoModelForImageTextToText."""

from __future__ import annotations

import pytest

from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.options import HfOptions
from mmbatch.errors import BadInputError
from tests.support import single_torch_thread
from tests.support.tiny_models import session_model_dir


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with single_torch_thread():
        yield


@pytest.fixture(scope="session")
def llava_dir(tmp_path_factory):
    return session_model_dir(tmp_path_factory, "llava")


@pytest.fixture(scope="session")
def idefics3_dir(tmp_path_factory):
    return session_model_dir(tmp_path_factory, "idefics3")


@pytest.mark.parametrize(("fixture", "architecture"), [
    ("llava_dir", "LlavaForConditionalGeneration"),
    ("idefics3_dir", "Idefics3ForConditionalGeneration"),
])
def test_settings_name_model_architecture_dtype_and_device(request, fixture, architecture):
    model_dir = request.getfixturevalue(fixture)
    backend = create_backend(HfOptions(model=str(model_dir), device="cpu"))
    settings = backend.settings()
    assert settings["backend"] == "hf"
    assert settings["model"] == str(model_dir)
    assert settings["architecture"] == architecture
    assert settings["dtype"] == "float32"  # auto on the CPU
    assert settings["device"] == "cpu"
    assert settings["generation"]["do_sample"] is False
    assert settings["likelihood"]["include_eos"] is False
    assert settings["video"] == "frames as images"
    backend.close()


def test_explicit_dtype_is_used(llava_dir):
    import torch

    backend = create_backend(HfOptions(model=str(llava_dir), dtype="bfloat16"))
    assert backend.settings()["dtype"] == "bfloat16"
    assert next(backend.loaded.model.parameters()).dtype == torch.bfloat16


def test_missing_model_directory_is_bad_input(tmp_path):
    with pytest.raises(BadInputError, match="no-such-model: no such folder"):
        create_backend(HfOptions(model=str(tmp_path / "no-such-model")))


def test_uncached_hub_id_offline_is_bad_input(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BadInputError, match=r"llava-hf/llava-1\.5-7b-hf"):
        create_backend(HfOptions(model="llava-hf/llava-1.5-7b-hf"))


@pytest.mark.parametrize(("options", "message"), [
    ({"dtype": "float8"}, "--dtype"),
    ({"device": "tpu"}, "--device"),
    ({"batch_size": 0}, "--batch-size"),
])
def test_invalid_options_are_bad_input(llava_dir, options, message):
    with pytest.raises(BadInputError, match=message):
        create_backend(HfOptions(model=str(llava_dir), **options))


def test_cuda_without_a_gpu_is_bad_input(llava_dir):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(BadInputError, match="no CUDA device"):
        create_backend(HfOptions(model=str(llava_dir), device="cuda"))


def test_a_finished_build_is_reused_and_no_staging_folder_is_left(llava_dir):
    from tests.support.tiny_models import build_cached

    weights = llava_dir / "model.safetensors"
    before = weights.stat().st_mtime_ns
    assert build_cached("llava", llava_dir) == llava_dir
    assert weights.stat().st_mtime_ns == before
    assert not [path for path in llava_dir.parent.iterdir() if path.name.startswith(".")]
