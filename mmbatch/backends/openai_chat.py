"""The ``openai`` backend: any OpenAI-compatible chat endpoint (vLLM, SGLang, LMDeploy, Ollama, GPT-4o).

Images (and sampled video frames) go first in the user message as base64 PNG data URLs, then the prompt text, the
way the prompt templates assume. ``--concurrency`` requests are in flight; each finished response is yielded at once
(a list of one result), so a killed run loses only the requests in flight. A request that still fails after its
retries gives its row an ``error``. ``generate-image`` rows go to the images API (:mod:`.openai_images`). Likelihood
rows are scored through servers that return prompt log-probs (vLLM); with any other server a run with likelihood
rows is refused at start (see :mod:`.openai_likelihood`).
"""

from __future__ import annotations

import asyncio
import base64
import io
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image

from mmbatch.backends.base import (
    MIN_CHUNK_ROWS,
    ROUNDS_PER_CHUNK,
    BackendOptions,
    Request,
    Result,
    parse_image_size,
    with_system_prompt,
)
from mmbatch.backends.generation_args import GenerationArgs
from mmbatch.backends.openai_images import decode_picture, image_sender
from mmbatch.backends.openai_likelihood import LIKELIHOOD_SETTINGS, probe_prompt_logprobs, score_options
from mmbatch.errors import BadInputError
from mmbatch.event_loop_runner import EventLoopRunner
from mmbatch.openai_client import (
    INFER_KEY_VARIABLES,
    ChatCallError,
    ChatClient,
    ClientSettings,
    api_key_from_environment,
)
from mmbatch.server_urls import OFFICIAL_BASE_URL, resolved_base_url, without_credentials

PNG_COMPRESS_LEVEL = 1
"""zlib's quickest setting: the pixels are the same at every level, and on a 640x480 photo level 1 took 23 ms where
PIL's default (6) took 124 ms, for a payload ~20 % larger (docs/benchmarks.md). At 64 requests in flight the
encoding, not the server, set the pace."""


def image_data_url(image: Image.Image) -> str:
    """``image`` as a ``data:image/png;base64,...`` URL (PNG: lossless, so the model sees the exact pixels)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


async def encoded_chat_messages(request: Request) -> list[dict[str, Any]]:
    """:func:`chat_messages`, with the pictures encoded in a worker thread when there are any: PIL lets go of
    Python's lock while it compresses, so the event loop goes on sending and reading the other requests."""
    if not request.images:
        return chat_messages(request)
    return await asyncio.to_thread(chat_messages, request)


def chat_messages(request: Request) -> list[dict[str, Any]]:
    """The system message when the request has one, then one user message: the images (or video frames) first,
    then the prompt text; or, for a prompt cut at its image placeholders, each image between its segments (empty
    segments left out)."""
    images = [{"type": "image_url", "image_url": {"url": image_data_url(image)}} for image in request.images]
    parts: list[dict[str, Any]]
    if request.segments is not None:
        parts = []
        for position, text in enumerate(request.segments):
            if position:
                parts.append(images[position - 1])
            if text:
                parts.append({"type": "text", "text": text})
    else:
        parts = [*images, {"type": "text", "text": request.prompt}]
    system = [] if request.system_prompt is None else [{"role": "system", "content": request.system_prompt}]
    return [*system, {"role": "user", "content": parts}]


SERVER_EXTENSIONS = ("top_k", "min_p", "repetition_penalty")
"""``--gen-arg`` keys that are not in OpenAI's chat completions API but that vLLM, SGLang and LMDeploy servers take
in the same request body."""


def sampling_fields(generation: GenerationArgs, base_url: str) -> dict[str, Any]:
    """The request fields of the ``--gen-arg`` settings (``stop``, ``top_p``, ``seed``, and the server extensions).

    Raises:
        BadInputError: a server extension for the official OpenAI API, which refuses unknown fields; beam search.
    """
    generation.refuse_beams("openai")  # chat completions have no beam search setting
    given = generation.given()
    extensions = [key for key in SERVER_EXTENSIONS if key in given]
    if extensions and base_url == OFFICIAL_BASE_URL:
        raise BadInputError(f"--gen-arg {', '.join(extensions)}: the official OpenAI API has no such setting (vLLM, "
                            "SGLang and LMDeploy servers take it); use --base-url with such a server, or drop it")
    return given


@dataclass(frozen=True)
class OpenAIOptions(BackendOptions):
    """Options of an OpenAI-compatible chat completions server."""

    base_url: str | None = None
    """Server URL, e.g. ``http://localhost:8000/v1``; None means the official API."""
    concurrency: int = 16
    """Requests in flight."""
    timeout_s: float = 120.0
    """Seconds per request."""
    max_retries: int = 5
    """Retries on 429, 5xx and timeouts, with exponential backoff and jitter."""
    image_size: str | None = None
    """generate-image rows: ``WxH`` of the pictures (images API); None keeps the model's default."""

    def chunk_rows(self) -> int:
        """Several rounds of concurrent requests (they drain at the end of each chunk)."""
        return max(MIN_CHUNK_ROWS, ROUNDS_PER_CHUNK * self.concurrency)


class OpenAIChatBackend:
    """Generation through a chat completions endpoint."""

    name = "openai"

    def __init__(self, options: OpenAIOptions) -> None:
        try:
            parse_image_size(options.image_size)
        except ValueError as exc:
            raise BadInputError(str(exc)) from exc
        # The server as the client will resolve it: OPENAI_BASE_URL may name a vLLM server without --base-url.
        self.sampling = sampling_fields(options.generation, resolved_base_url(options.base_url))
        """The ``--gen-arg`` fields of every chat request."""
        self.options = options
        settings = ClientSettings(
            base_url=options.base_url,
            api_key=api_key_from_environment(INFER_KEY_VARIABLES),
            concurrency=options.concurrency,
            timeout_s=options.timeout_s,
            max_retries=options.max_retries,
        )
        self._runner = EventLoopRunner()
        self._client = ChatClient(settings)
        self._likelihood_refusal: str | None = None
        self._likelihood_probed = False
        if self._client.needs_key:
            self._runner.close()
            raise BadInputError("the official OpenAI API needs a key: set OPENAI_API_KEY, or point --base-url at "
                                "an OpenAI-compatible server")
        try:
            self._runner.run(self._client.probe(options.model))
            if options.system_prompt is not None or self.sampling:
                self._runner.run(self._probe_request_settings())
        except BaseException:
            self.close()
            raise

    async def _probe_request_settings(self) -> None:
        """One 1-token request with the system message and ``--gen-arg`` fields, before any row: a server whose
        chat template refuses a system role, or that refuses a field, stops the run here (exit status 2) instead
        of failing every row.

        Raises:
            BadInputError: the server refused the request.
        """
        probe = Request(index=0, prompt="Say OK.", system_prompt=self.options.system_prompt)
        body = {"model": self.options.model, "messages": chat_messages(probe), "max_tokens": 1,
                "temperature": self.options.temperature, **self.sampling}
        try:
            await self._client.chat(body)
        except ChatCallError as exc:
            raise BadInputError(f"{self._client.where} refused a request with this run's --system-prompt / --gen-arg "
                                f"settings ({exc}); drop or change them") from None

    def settings(self) -> dict[str, Any]:
        """What changes the answers: the model on its server, the sampling settings and the system prompt."""
        return {"backend": self.name, "model": self.options.model,
                "base_url": None if self.options.base_url is None else without_credentials(self.options.base_url),
                "temperature": self.options.temperature, "generation": self.sampling,
                "system_prompt": self.options.system_prompt, "likelihood": LIKELIHOOD_SETTINGS}

    def generate(self, requests: Sequence[Request], *, max_new_tokens: int) -> Iterator[list[Result]]:
        """Send every request, ``concurrency`` at a time; yield each result as soon as it arrives."""

        async def answer(request: Request) -> Result:
            started = time.monotonic()
            body = {"model": self.options.model, "messages": await encoded_chat_messages(request),
                    "temperature": self.options.temperature, "max_tokens": max_new_tokens, **self.sampling}
            try:
                reply = await self._client.chat(body)
            except ChatCallError as exc:
                return Result(request.index, error=str(exc), latency_ms=_ms_since(started))
            # Servers leave the stop string out of the answer; cutting again keeps that true of any server.
            text, _ = self.options.generation.cut_at_stop(reply.text)
            return Result(request.index, prediction=text, output_tokens=reply.completion_tokens or None,
                          latency_ms=_ms_since(started))

        window = 2 * self.options.concurrency  # images are encoded when a request starts: keep few in memory
        requests = with_system_prompt(requests, self.options.system_prompt)
        for result in self._runner.as_completed(requests, answer, window=window):
            yield [result]

    def generate_images(self, requests: Sequence[Request]) -> Iterator[list[Result]]:
        """One picture per request from the images API, ``concurrency`` at a time, each yielded as it arrives."""

        async def draw(request: Request) -> Result:
            started = time.monotonic()
            send = image_sender(request, model=self.options.model, size=self.options.image_size)
            try:
                picture = decode_picture(await self._client.fetch(send))
            except (ChatCallError, ValueError) as exc:  # a bad reply's snippet is the server's text: scrubbed
                return Result(request.index, error=self._client.scrub(str(exc)), latency_ms=_ms_since(started))
            return Result(request.index, image=picture, output_tokens=0,
                          latency_ms=_ms_since(started))

        for result in self._runner.as_completed(requests, draw, window=2 * self.options.concurrency):
            yield [result]

    def likelihood_refusal(self) -> str | None:
        """None when the server returns prompt log-probs (probed once, with one short request), else why not."""
        if not self._likelihood_probed:
            self._likelihood_refusal = self._runner.run(probe_prompt_logprobs(self._client, self.options.model))
            self._likelihood_probed = True
        return self._likelihood_refusal

    def loglikelihood(self, requests: Sequence[Request]) -> Iterator[list[Result]]:
        """Score each row's options from the server's prompt log-probs; yield each row as soon as it is scored."""
        refusal = self.likelihood_refusal()
        if refusal is not None:  # the stage refuses such runs at start; a direct caller gets per-row errors
            yield [Result(request.index, error=refusal) for request in requests]
            return

        async def score(request: Request) -> Result:
            return await score_options(self._client, self.options.model, request,
                                       await encoded_chat_messages(request))

        # Each row has 1 + options requests in flight; the client's semaphore still caps them at --concurrency.
        window = max(1, self.options.concurrency // 2)
        requests = with_system_prompt(requests, self.options.system_prompt)
        for result in self._runner.as_completed(requests, score, window=window):
            yield [result]

    def close(self) -> None:
        """Close the HTTP connections and the event loop."""
        if not self._runner.loop.is_closed():
            self._runner.run(self._client.aclose())
            self._runner.close()


def _ms_since(started: float) -> float:
    return (time.monotonic() - started) * 1000.0


def create_backend(options: OpenAIOptions) -> OpenAIChatBackend:
    """The ``openai`` backend for ``options`` (probes the server first: unreachable means exit status 2)."""
    return OpenAIChatBackend(options)
