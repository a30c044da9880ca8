"""Batched generation with the hf backend on tiny offline LLaVA and Idefics3 models."""

from __future__ import annotations

import pytest
from PIL import Image

from mmbatch.backends.base import Request
from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.options import HfOptions
from tests.support import single_torch_thread
from tests.support.tiny_models import session_model_dir


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with single_torch_thread():
        yield

ARCHITECTURES = ["llava", "idefics3"]


@pytest.fixture(scope="module", params=ARCHITECTURES)
def model_dir(request, tmp_path_factory):
    return session_model_dir(tmp_path_factory, request.param)


def make_requests() -> list[Request]:
    """Rows of different prompt lengths and image sizes, one video row (3 frames) and one text-only row."""
    requests = [
        Request(
            index=10 + number,
            prompt="What is shown in the image?" + " Look carefully." * number,
            images=[Image.new("RGB", (30 + 17 * number, 40 + 5 * number), (40 * number, 200 - 30 * number, 90))],
        )
        for number in range(5)
    ]
    frames = [Image.new("RGB", (48, 36), color) for color in ("red", "green", "blue")]
    requests.append(Request(index=20, prompt="What happens in the video?", images=frames, is_video=True))
    requests.append(Request(index=21, prompt="How many apples are on the table?"))
    return requests


def generate_all(model_dir, batch_size: int, requests: list[Request], **kwargs) -> list:
    backend = create_backend(HfOptions(model=str(model_dir), batch_size=batch_size))
    return [result for batch in backend.generate(requests, max_new_tokens=6, **kwargs) for result in batch]


def test_batched_greedy_outputs_equal_batch_size_one(model_dir):
    requests = make_requests()
    batched = generate_all(model_dir, 4, requests)
    single = generate_all(model_dir, 1, requests)
    assert [result.index for result in batched] == [request.index for request in requests]
    assert [result.prediction for result in batched] == [result.prediction for result in single]
    assert [result.output_tokens for result in batched] == [result.output_tokens for result in single]
    # The rows must actually differ, or the comparison above would prove little.
    assert len({result.prediction for result in single}) >= 3
    assert all(result.error is None and result.latency_ms > 0 for result in batched)
    assert all(1 <= result.output_tokens <= 6 for result in batched)


def test_each_finished_batch_is_yielded_on_its_own(model_dir):
    backend = create_backend(HfOptions(model=str(model_dir), batch_size=2))
    requests = make_requests()[:5]
    batches = list(backend.generate(requests, max_new_tokens=2))
    assert [len(batch) for batch in batches] == [2, 2, 1]
    # The batch's wall time is shared among its rows.
    assert batches[0][0].latency_ms == batches[0][1].latency_ms


def test_out_of_memory_batch_is_retried_at_half_size(model_dir):
    """A batch above 2 rows raises CUDA's out-of-memory error (it cannot really happen on this CPU)."""
    import torch

    requests = make_requests()[:5]
    expected = generate_all(model_dir, 1, requests)
    backend = create_backend(HfOptions(model=str(model_dir), batch_size=4))

    def fail_above_two_rows(module, args, kwargs):
        if kwargs["input_ids"].shape[0] > 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    backend.loaded.model.register_forward_pre_hook(fail_above_two_rows, with_kwargs=True)
    batches = list(backend.generate(requests, max_new_tokens=6))
    results = [result for batch in batches for result in batch]
    assert [result.prediction for result in results] == [result.prediction for result in expected]
    assert all(result.error is None for result in results)
    assert backend.generation_runner.batch_size == 2
    assert backend.generation_runner.oom_events == 1
    # The first (failed) batch of 4 is still yielded as one list; later batches use the smaller size.
    assert [len(batch) for batch in batches] == [4, 1]


def test_a_row_the_processor_rejects_gets_an_error_and_the_others_go_on(model_dir):
    requests = make_requests()[:4]
    requests[1] = Request(index=requests[1].index, prompt="Broken", images=[Image.new("RGB", (0, 0))])
    results = generate_all(model_dir, 4, requests)
    assert results[1].error is not None and results[1].prediction is None
    assert "ZeroDivisionError" in results[1].error
    fine = [results[0], results[2], results[3]]
    expected = generate_all(model_dir, 1, [requests[0], requests[2], requests[3]])
    assert [result.prediction for result in fine] == [result.prediction for result in expected]
    assert all(result.error is None for result in fine)


def test_sampling_with_a_temperature_is_seeded(model_dir):
    requests = make_requests()[:3]
    options = HfOptions(model=str(model_dir), batch_size=3, temperature=1.5)
    first, second = (
        [result.prediction for batch in create_backend(options).generate(requests, max_new_tokens=6)
         for result in batch]
        for _ in range(2)
    )
    assert first == second
    settings = create_backend(options).settings()["generation"]
    assert settings["do_sample"] is True and settings["temperature"] == 1.5
