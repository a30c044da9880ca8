"""A real model behind the test OpenAI server: greedy answers and vLLM-style prompt log-probabilities.

:class:`ModelReplies` loads a saved (tiny) model with ``AutoProcessor`` + ``AutoModelForImageTextToText`` and answers
chat requests the way a vLLM server does: the conversation is rendered with the processor's chat template
(``add_generation_prompt`` / ``continue_final_message`` as the request says), images come from the base64 data URLs,
and when the request asks for ``prompt_logprobs`` the reply carries, for every prompt token, its id and its
log-probability given the tokens before it (``[null, {"ID": {"logprob": ..., "rank": ..., "decoded_token": ...}}]``).
Only ``prompt_logprobs: 0`` with ``max_tokens: 1`` is served (each position holds its own token), which is what
mmbatch sends.

Plug it into :class:`support.openai_server.OpenAIServer` with :meth:`ModelReplies.script`. Model calls are
serialised by a lock: the server answers on several threads, the model runs one request at a time.

Run it on its own (``bench/bench_throughput.py`` does)::

    python tests/support/logprob_model.py MODEL_DIR --name tiny-llava --port 0
"""

from __future__ import annotations

import argparse
import base64
import io
import sys
import threading
import time
from pathlib import Path
from typing import Any

from PIL import Image

if __package__ in (None, ""):  # run as a script: make ``support`` importable like under pytest
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.openai_server import OpenAIServer, ServerScript


class ModelReplies:
    """Answers chat requests with a local model (see the module docstring)."""

    def __init__(self, model_dir: Path, name: str) -> None:
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.name = name
        """The model id ``/v1/models`` lists."""
        self.processor = AutoProcessor.from_pretrained(model_dir)
        self.model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32).eval()
        self._lock = threading.Lock()
        self._passes: dict[int, tuple[list[int], Any]] = {}
        """Forward passes made by :meth:`reply` for :meth:`extra`, by request body."""

    def script(self) -> ServerScript:
        """A server script answering with this model."""
        return ServerScript(reply=self.reply, extra=self.extra, models=[self.name])

    def _inputs(self, body: dict[str, Any]) -> Any:
        """The processor's tensors for the request's conversation, rendered as the request asks."""
        messages, images = [], []
        for message in body["messages"]:
            content = message["content"]
            if isinstance(content, list):
                parts = []
                for part in content:
                    if part["type"] == "image_url":
                        images.append(_decode_data_url(part["image_url"]["url"]))
                        parts.append({"type": "image"})
                    else:
                        parts.append(part)
                content = parts
            messages.append({"role": message["role"], "content": content})
        continue_final = bool(body.get("continue_final_message", False))
        text = self.processor.apply_chat_template(
            messages, tokenize=False, continue_final_message=continue_final,
            add_generation_prompt=bool(body.get("add_generation_prompt", not continue_final)))
        if images:
            return self.processor(text=[text], images=[images], return_tensors="pt")
        return self.processor(text=[text], return_tensors="pt")

    def reply(self, prompt: str, body: dict[str, Any]) -> str:
        """The greedy answer, ``max_tokens`` long at most.

        A request for prompt log-probs with ``max_tokens: 1`` (what mmbatch sends) is answered from one forward
        pass, whose log-probs :meth:`extra` then reads, as a server computes both in the same pass.
        """
        import torch

        inputs = self._inputs(body)
        if body.get("prompt_logprobs") is not None and int(body.get("max_tokens") or 16) == 1:
            with self._lock, torch.inference_mode():
                logprobs = torch.log_softmax(self.model(**inputs).logits[0].float(), dim=-1)
            with self._lock:
                self._passes[id(body)] = (inputs["input_ids"][0].tolist(), logprobs)
            return str(self.processor.tokenizer.decode([int(logprobs[-1].argmax())], skip_special_tokens=True))
        with self._lock, torch.inference_mode():
            output = self.model.generate(**inputs, max_new_tokens=int(body.get("max_tokens") or 16), do_sample=False)
        new_tokens = output[0, inputs["input_ids"].shape[1]:]
        return str(self.processor.tokenizer.decode(new_tokens, skip_special_tokens=True))

    def extra(self, body: dict[str, Any]) -> dict[str, Any]:
        """``prompt_logprobs`` when the request asks for them (only 0 alternatives are served)."""
        if body.get("prompt_logprobs") is None:
            return {}
        if body["prompt_logprobs"] != 0:
            raise ValueError("this test server returns prompt_logprobs: 0 only")
        with self._lock:
            made = self._passes.pop(id(body), None)
        if made is None:
            raise ValueError("this test server returns prompt_logprobs with max_tokens: 1 only")
        ids, logprobs = made
        positions: list[dict[str, Any] | None] = [None]
        for position in range(1, len(ids)):
            row = logprobs[position - 1]
            token = ids[position]
            rank = int((row > row[token]).sum().item()) + 1
            positions.append({str(token): {"logprob": row[token].item(), "rank": rank,
                                           "decoded_token": self.processor.tokenizer.decode([token])}})
        return {"prompt_logprobs": positions}


def _decode_data_url(url: str) -> Image.Image:
    if not url.startswith("data:image/"):
        raise ValueError("only data: image URLs are served")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")


def main(argv: list[str] | None = None) -> int:
    """Serve the model until interrupted; prints ``PORT <n>`` once listening."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--name", default="local-model", help="model id the server lists")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = OpenAIServer(ModelReplies(args.model_dir, args.name).script(), port=args.port).start()
    print(f"PORT {server.httpd.server_address[1]}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
