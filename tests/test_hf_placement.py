"""Big-model options of the hf backend, through the real loader on the tiny LLaVA: accelerate's device map, the
attention kernel and remote code are passed through, recorded, and change no answer; bad values are exit 2."""

from __future__ import annotations

import pytest
from PIL import Image

from mmbatch.backends.base import Request
from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.options import HfOptions
from mmbatch.errors import BadInputError
from tests.support import single_torch_thread
from tests.support.tiny_models import session_model_dir


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with single_torch_thread():
        yield


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return str(session_model_dir(tmp_path_factory, "llava"))


def answers(options: HfOptions) -> tuple[list[str | None], dict]:
    backend = create_backend(options)
    rows = [Request(index=n, prompt="What is shown in the image?" + " Look." * n,
                    images=[Image.new("RGB", (32, 32), (80 * n, 90, 140))]) for n in range(3)]
    found = [r.prediction for chunk in backend.generate(rows, max_new_tokens=5) for r in chunk]
    return found, backend.settings()


def test_device_map_and_attention_kernel_change_no_answer(model_dir: str) -> None:
    plain, plain_settings = answers(HfOptions(model=model_dir, device="cpu"))
    mapped, settings = answers(HfOptions(model=model_dir, device="cpu", device_map="auto", max_memory="cpu=2GiB",
                                         attn_implementation="eager"))
    assert mapped == plain
    assert settings["device_map"] == "auto" and settings["max_memory"] == "cpu=2GiB"
    assert settings["attn_implementation"] == "eager" and plain_settings["attn_implementation"] != "eager"
    assert settings["trust_remote_code"] is False


@pytest.mark.parametrize(("options", "message"), [
    ({"attn_implementation": "fast"}, "attn_implementation 'fast'"),
    ({"device_map": "everywhere"}, "device_map 'everywhere'"),
    ({"max_memory": "cpu=1GiB"}, "only applies with device_map"),
    ({"device_map": "auto", "max_memory": "lots"}, "DEVICE=SIZE"),
])
def test_bad_placement_is_a_clear_error(model_dir: str, options: dict, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        create_backend(HfOptions(model=model_dir, device="cpu", **options))


def test_placement_flags_are_the_backend_options_they_name(model_dir: str, tmp_path, capsys) -> None:
    """``--device-map``, ``--max-memory``, ``--attn-implementation`` and ``--trust-remote-code`` through the CLI: the
    options recorded are those of the same ``--backend-arg`` keys; a backend without them refuses them (exit 2)."""
    from mmbatch.cli import main
    from mmbatch.stage_records import InferRecord
    from mmbatch.tableio import read_metadata
    from tests.conftest import EXAMPLES

    prepared, predictions = tmp_path / "prepared.parquet", tmp_path / "predictions.parquet"
    assert main(["prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(prepared),
                 "--limit", "1"]) == 0
    assert main(["infer", "--input", str(prepared), "--output", str(predictions), "--backend", "hf", "--model",
                 model_dir, "--device", "cpu", "--max-new-tokens", "3", "--device-map", "auto", "--max-memory",
                 "cpu=2GiB", "--attn-implementation", "eager", "--trust-remote-code"]) == 0
    record = InferRecord.from_metadata(read_metadata(predictions))
    assert record is not None
    assert {key: record.backend_options[key] for key in
            ("device_map", "max_memory", "attn_implementation", "trust_remote_code")} == {
        "device_map": "auto", "max_memory": "cpu=2GiB", "attn_implementation": "eager", "trust_remote_code": True}
    capsys.readouterr()
    assert main(["infer", "--input", str(prepared), "--output", str(tmp_path / "echo.parquet"), "--backend", "echo",
                 "--model", "answer", "--device-map", "auto"]) == 2
    assert "device_map" in capsys.readouterr().err
