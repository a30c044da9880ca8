"""One BOS, as the model's own chat template and tokenizer give it: a tiny LLaVA whose tokenizer adds BOS (like
Llama's and Gemma's) and whose template also writes it (like Gemma 3, Idefics3, Mllama, Mistral 3), loaded through
the real hf backend. Calling the processor with its default ``add_special_tokens=True`` would start every prompt
with two BOS tokens and change answers and likelihoods."""

from __future__ import annotations

import pytest
from PIL import Image

from mmbatch.backends.base import Request
from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.boundaries import join_text
from mmbatch.backends.hf.messages import chat_text, encode
from mmbatch.backends.hf.options import HfOptions
from tests.support import single_torch_thread
from tests.support.tiny_models import session_model_dir


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with single_torch_thread():
        yield


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    return create_backend(HfOptions(model=str(session_model_dir(tmp_path_factory, "llava-bos"))))


def requests() -> list[Request]:
    return [Request(index=n, prompt="What is shown in the image?" + " Look carefully." * n,
                    images=[Image.new("RGB", (30 + 9 * n, 40), (60 * n, 120, 200 - 40 * n))],
                    options=["a red square", "a blue circle", "a cat", "a green tree"]) for n in range(3)]


def own_template_inputs(loaded, request: Request):
    """What the model's own ``apply_chat_template(tokenize=True)`` gives for the row."""
    content = [{"type": "image"} for _ in request.images] + [{"type": "text", "text": request.prompt}]
    return loaded.processor.apply_chat_template(
        [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=True, return_dict=True,
        return_tensors="pt", images=request.images)


def test_the_tokenizer_adds_bos_and_the_template_writes_it(backend) -> None:
    tokenizer = backend.loaded.processor.tokenizer
    assert tokenizer("Hi")["input_ids"][0] == tokenizer.bos_token_id
    assert chat_text(backend.loaded.processor, requests()[0]).startswith(tokenizer.bos_token)


def test_inputs_have_one_bos_like_the_models_own_template(backend) -> None:
    loaded = backend.loaded
    bos = loaded.processor.tokenizer.bos_token_id
    for request in requests():
        ours = encode(loaded.processor, [chat_text(loaded.processor, request)], [request.images], "cpu", None)
        own = own_template_inputs(loaded, request)
        assert ours["input_ids"].tolist() == own["input_ids"].tolist()
        assert ours["input_ids"][0].tolist().count(bos) == 1


def test_greedy_answers_equal_generate_on_the_models_own_inputs(backend) -> None:
    import torch

    loaded = backend.loaded
    batch = requests()
    ours = [r.prediction for results in backend.generate(batch, max_new_tokens=6) for r in results]
    theirs = []
    for request in batch:
        inputs = own_template_inputs(loaded, request)
        with torch.inference_mode():
            out = loaded.model.generate(**inputs, max_new_tokens=6, do_sample=False)
        new = out[0, inputs["input_ids"].shape[1]:]
        theirs.append(loaded.processor.tokenizer.decode(new, skip_special_tokens=True).strip())
    assert ours == theirs
    assert len(set(ours)) >= 2


def test_option_logprobs_equal_a_plain_forward_pass_per_option(backend) -> None:
    import torch

    loaded = backend.loaded
    batch = requests()
    results = [r for chunk in backend.loglikelihood(batch) for r in chunk]
    for request, result in zip(batch, results, strict=True):
        assert result.error is None, result.error
        context = own_template_inputs(loaded, request)["input_ids"][0].tolist()
        for option, got in zip(request.options, result.choice_logprobs, strict=True):
            # The option joined as the product documents it (a space after the assistant's turn prefix).
            prompt = chat_text(loaded.processor, request)
            inputs = loaded.processor(text=[prompt + join_text(prompt) + option], images=[request.images],
                                      return_tensors="pt", add_special_tokens=False)
            ids = inputs["input_ids"][0].tolist()
            assert ids[: len(context)] == context and ids.count(loaded.processor.tokenizer.bos_token_id) == 1
            option_ids = ids[len(context):]
            with torch.inference_mode():
                logits = loaded.model(**inputs).logits[0].float()
            logprobs = torch.log_softmax(logits[len(context) - 1: -1], dim=-1)
            expected = logprobs.gather(-1, torch.tensor(option_ids).unsqueeze(-1)).sum().item()
            assert got == pytest.approx(expected, abs=1e-4)
