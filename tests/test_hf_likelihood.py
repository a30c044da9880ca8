"""Option log-likelihoods with a shared prompt pass equal a naive full pass per option (float32, 1e-4)."""

from __future__ import annotations

import shutil

import pytest
from PIL import Image

from mmbatch.backends.base import Request
from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.boundaries import split_continuation
from mmbatch.backends.hf.messages import chat_text
from mmbatch.backends.hf.options import HfOptions
from tests.support import single_torch_thread
from tests.support.tiny_models import session_model_dir

TOLERANCE = 1e-4


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with single_torch_thread():
        yield


@pytest.fixture(scope="module", params=["llava", "idefics3"])
def backend(request, tmp_path_factory):
    model_dir = session_model_dir(tmp_path_factory, request.param)
    return create_backend(HfOptions(model=str(model_dir), batch_size=2, dtype="float32"))


def naive_scores(backend, request: Request) -> list[tuple[float, int]]:
    """The reference: for each option, one full pass over images + prompt + option, written independently."""
    import torch

    processor, model = backend.loaded.processor, backend.loaded.model
    context = chat_text(processor, request)
    tokenizer = processor.tokenizer
    context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
    scores = []
    for option in request.options:
        full_text = context + (" " if not context[-1].isspace() else "") + option
        full_ids = tokenizer(full_text, add_special_tokens=False)["input_ids"]
        shared = next(i for i, (a, b) in enumerate(zip([*context_ids, -1], full_ids, strict=False)) if a != b)
        count = len(full_ids) - shared
        kwargs = {"images": [request.images]} if request.images else {}
        inputs = processor(text=[full_text], return_tensors="pt", **kwargs)
        with torch.no_grad():
            logits = model(**inputs).logits[0].float()
        logprobs = torch.log_softmax(logits, dim=-1)
        ids = inputs["input_ids"][0]
        positions = range(len(ids) - count, len(ids))
        scores.append((sum(logprobs[p - 1, ids[p]].item() for p in positions), count))
    return scores


def image(width: int, height: int, color: str) -> Image.Image:
    return Image.new("RGB", (width, height), color)


def make_requests() -> list[Request]:
    return [
        Request(index=1, prompt="Question: What is shown in the image?\nAnswer:", images=[image(40, 30, "red")],
                options=["a red square", "a blue circle", "a green tree", "the dog is running in the park"]),
        Request(index=2, prompt="Question: How many apples are on the table?\nAnswer:",
                images=[image(70, 50, "yellow")], options=["three", "two oranges", "ten", "one"]),
        Request(index=3, prompt="Question: What happens?\nAnswer:", is_video=True,
                images=[image(48, 36, color) for color in ("red", "green", "blue")],
                options=["A man is riding a bicycle down the street.", "The dog is running."]),
        Request(index=4, prompt="Is there a person in this image?", options=["Yes", "No"]),
    ]


def collect(backend, requests):
    return [result for batch in backend.loglikelihood(requests) for result in batch]


def test_shared_prefix_scores_equal_naive_full_passes(backend):
    requests = make_requests()
    results = collect(backend, requests)
    assert [result.index for result in results] == [request.index for request in requests]
    for request, result in zip(requests, results, strict=True):
        assert result.error is None
        expected = naive_scores(backend, request)
        assert result.choice_ntokens == [count for _, count in expected]
        assert result.choice_logprobs == pytest.approx([value for value, _ in expected], abs=TOLERANCE)
    # Multi-token options really were scored on the shared prompt (several tokens, different sums).
    assert max(results[0].choice_ntokens) > 3
    assert len(set(results[0].choice_logprobs)) == 4


def count_forward_passes(backend) -> list[int]:
    calls = [0]

    def count(module, args, kwargs):
        calls[0] += 1

    handle = backend.loaded.model.register_forward_pre_hook(count, with_kwargs=True)
    return calls, handle


def test_single_token_letters_are_scored_from_one_forward_pass(backend):
    request = Request(index=7, prompt="Which option is right? Answer with the letter.",
                      images=[image(40, 40, "blue")], options=["A", "B", "C", "D"])
    tokenizer = backend.loaded.processor.tokenizer
    context = chat_text(backend.loaded.processor, request)
    assert all(len(split_continuation(tokenizer, context, letter).token_ids) == 1 for letter in "ABCD")
    calls, handle = count_forward_passes(backend)
    try:
        [result] = collect(backend, [request])
    finally:
        handle.remove()
    assert calls[0] == 1
    assert result.choice_ntokens == [1, 1, 1, 1]
    expected = naive_scores(backend, request)
    assert result.choice_logprobs == pytest.approx([value for value, _ in expected], abs=TOLERANCE)


def test_multi_token_options_take_one_prompt_pass_and_one_batched_pass(backend):
    request = make_requests()[0]
    calls, handle = count_forward_passes(backend)
    try:
        collect(backend, [request])
    finally:
        handle.remove()
    assert calls[0] == 2


def test_a_batch_of_rows_shares_one_prompt_pass_and_one_option_pass(backend):
    """Rows of different prompt lengths and image counts, left-padded into one prompt pass; positions must not
    shift."""
    wide = create_backend(HfOptions(model=backend.options.model, batch_size=8, dtype="float32"))
    assert wide.rows_per_prompt_pass == 1  # on a CPU; the GPU setting is what this test checks
    wide.rows_per_prompt_pass = 8
    requests = [request for request in make_requests() if request.images]
    requests.append(Request(index=8, prompt="Which one? " * 6, images=[image(30, 60, "blue")], options=list("ABCD")))
    calls, handle = count_forward_passes(wide)
    try:
        batches = list(wide.loglikelihood(requests))
    finally:
        handle.remove()
    assert [len(batch) for batch in batches] == [len(requests)]
    assert calls[0] == 2
    for request, result in zip(requests, batches[0], strict=True):
        expected = naive_scores(wide, request)
        assert result.choice_ntokens == [count for _, count in expected]
        assert result.choice_logprobs == pytest.approx([value for value, _ in expected], abs=TOLERANCE)


def test_tokens_merging_across_the_boundary_are_scored_by_a_full_pass(tmp_path_factory):
    """A chat template whose assistant turn ends with a space: ``ASSISTANT: `` + ``the dog`` gives the token ``Ġthe``,
    so the prompt's last token (``Ġ``) is not a prefix of prompt + option."""
    source = session_model_dir(tmp_path_factory, "llava")
    model_dir = tmp_path_factory.mktemp("llava-space-template")
    shutil.copytree(source, model_dir, dirs_exist_ok=True)
    template = model_dir / "chat_template.jinja"
    template.write_text(template.read_text().replace("ASSISTANT:{% endif %}", "ASSISTANT: {% endif %}"))
    merging = create_backend(HfOptions(model=str(model_dir), dtype="float32"))
    request = Request(index=5, prompt="What is shown in the image?", images=[image(40, 30, "red")],
                      options=["the dog", "is running", "a red square", "yes"])
    context = chat_text(merging.loaded.processor, request)
    assert context.endswith("ASSISTANT: ")
    assert not split_continuation(merging.loaded.processor.tokenizer, context, "the dog").shares_prefix
    # "yes" has no merge with the space: one option shares the prompt pass, the others do not.
    assert split_continuation(merging.loaded.processor.tokenizer, context, "yes").shares_prefix
    [result] = collect(merging, [request])
    expected = naive_scores(merging, request)
    assert result.error is None
    assert result.choice_ntokens == [count for _, count in expected]
    assert result.choice_logprobs == pytest.approx([value for value, _ in expected], abs=TOLERANCE)


def test_a_failing_row_gets_an_error_and_the_others_are_scored(backend):
    requests = make_requests()[:2]
    requests.insert(1, Request(index=9, prompt="Broken image", images=[Image.new("RGB", (0, 0))],
                               options=["yes", "no"]))
    requests.append(Request(index=10, prompt="No options", images=[image(30, 30, "white")]))
    results = collect(backend, requests)
    assert [result.error is None for result in results] == [True, False, True, False]
    assert "no options" in results[3].error
    assert [len(batch) for batch in backend.loglikelihood(requests)] == [2, 2]


def test_out_of_memory_prompt_pass_is_retried_with_fewer_rows(backend):
    import torch

    requests = [request for request in make_requests() if request.images][:2]
    expected = collect(backend, requests)
    wide = create_backend(HfOptions(model=backend.options.model, batch_size=2, dtype="float32"))
    wide.rows_per_prompt_pass = 2

    def fail_above_one_prompt(module, args, kwargs):
        if kwargs.get("pixel_values") is not None and kwargs["input_ids"].shape[0] > 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    wide.loaded.model.register_forward_pre_hook(fail_above_one_prompt, with_kwargs=True)
    results = collect(wide, requests)
    assert wide.likelihood_runner.batch_size == 1 and wide.likelihood_runner.oom_events == 1
    for result, reference in zip(results, expected, strict=True):
        assert result.error is None
        assert result.choice_logprobs == pytest.approx(reference.choice_logprobs, abs=TOLERANCE)
