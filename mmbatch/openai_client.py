"""An async client for OpenAI-compatible chat endpoints, shared by the judge and the ``openai`` infer backend.

What it does: many requests in flight (a semaphore of ``concurrency``), its own retries
(exponential backoff with jitter on 429, 5xx, timeouts, dropped connections and garbage bodies, honouring
``Retry-After``), a start-up probe that turns an unreachable or misconfigured server into one clear error, and a
bridge (:class:`EventLoopRunner`) that lets the synchronous stages consume results as each request finishes.

The API key is read from the environment and never appears in a message, a log line or a file: error texts from
the server are scrubbed of it before they go anywhere.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import h11

from mmbatch.errors import BadInputError
from mmbatch.http_transport import HttpResponse, KeepAliveConnections, ResponseTooLarge, lean_transport_applies
from mmbatch.secret_values import register_secret, scrub_text

T = TypeVar("T")
R = TypeVar("R")

JUDGE_KEY_VARIABLES = ("MMBATCH_JUDGE_API_KEY", "OPENAI_API_KEY")
"""Where the judge's key is read from, first found wins."""
INFER_KEY_VARIABLES = ("OPENAI_API_KEY",)
"""Where the ``openai`` backend's key is read from."""
OFFICIAL_BASE_URL = "https://api.openai.com/v1"
"""Used when no base URL is given (nor ``OPENAI_BASE_URL`` set)."""
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
KEYLESS_PLACEHOLDER = "EMPTY"
"""The key sent to servers that need none (vLLM's convention); the ``openai`` package refuses to run without one."""
MAX_REPLY_CHARS = 1 << 20
"""Longest assistant text accepted (a 512-token answer is ~2 KB, a judge's verdict a few bytes): a longer reply is a
failed row, not a 50 MB cell or cache entry."""
MAX_MESSAGE_CHARS = 1000
"""Longest server error message kept in an ``error`` cell or a printed line; the rest is cut and counted."""
MAX_RETRY_AFTER_S = 300.0
"""A ``Retry-After`` longer than this is capped (a server asking for an hour is treated as asking for 5 minutes)."""


@dataclass(frozen=True)
class ClientSettings:
    """How to reach the server and how hard to try."""

    base_url: str | None = None
    """OpenAI-compatible base URL (``http://host:8000/v1``); None means the official API."""
    api_key: str | None = field(default=None, repr=False)
    """The key, or None for servers that need none. Never printed (``repr=False``)."""
    concurrency: int = 16
    """Requests in flight at once."""
    timeout_s: float = 120.0
    """Seconds before one request counts as timed out."""
    max_retries: int = 5
    """Retries of one request on 429, 5xx, timeouts and garbage answers."""
    backoff_s: float = 1.0
    """First retry delay; doubled each retry, with +-50 % jitter, unless the server sends ``Retry-After``."""
    max_backoff_s: float = 60.0
    """Upper bound of one computed backoff delay."""


def api_key_from_environment(variables: Iterable[str]) -> str | None:
    """The first non-empty key among ``variables``."""
    for name in variables:
        value = os.environ.get(name, "").strip()
        if value:
            register_secret(value)
            return value
    return None


@dataclass(frozen=True)
class ChatReply:
    """One successful chat completion."""

    text: str
    """The assistant message's content."""
    prompt_tokens: int = 0
    """Input tokens, as the server reports them (0 when it does not)."""
    completion_tokens: int = 0
    """Output tokens, as the server reports them (0 when it does not)."""
    attempts: int = 1
    """HTTP attempts it took (1 = no retry)."""
    prompt_logprobs: tuple[tuple[int, float | None], ...] | None = None
    """When the request asked for ``prompt_logprobs`` (vLLM, SGLang): each prompt token's id and log-probability
    (None for the first token, which nothing predicts); None when the reply has none."""


class ChatCallError(Exception):
    """A request that still failed after its retries (or failed for good at once, e.g. HTTP 400)."""


@dataclass
class _Failure:
    message: str
    retryable: bool
    retry_after_s: float | None = None
    status: int | None = None
    """The HTTP status when the server answered one (None for transport problems and garbage bodies)."""
    said: str = ""
    """The server's own error message (scrubbed), with ``status``."""


class ChatClient:
    """Chat completions against one server, ``concurrency`` at a time, with retries.

    Two transports, one behaviour. A plain ``http://`` server that no proxy variable applies to (a local vLLM or
    SGLang) is reached through mmbatch's keep-alive connections (:mod:`mmbatch.http_transport`), ~10x cheaper in CPU
    per request than the package's; everything else (``https://``, proxies, the images API) goes through the
    ``openai`` package (one ``AsyncOpenAI`` and one connection pool for the client's life, with room for
    ``concurrency`` connections). The package's own retries are off because mmbatch's loop below retries, so that
    ``Retry-After``, the attempt count and the error text are the same for every server and both transports. Replies
    are read raw and parsed here, so a 200 that is not a chat completion is a retryable failure rather than an
    exception from the package's models. Create and use it inside one event loop (see :class:`EventLoopRunner`);
    ``aclose`` when done.
    """

    def __init__(self, settings: ClientSettings, *, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.settings = settings
        self.base_url = (settings.base_url or os.environ.get("OPENAI_BASE_URL") or OFFICIAL_BASE_URL).rstrip("/")
        check_base_url(self.base_url)
        self.where = "the official OpenAI API" if self.base_url == OFFICIAL_BASE_URL else self.base_url
        """The server, for messages."""
        self._client: Any = None
        self._connections = KeepAliveConnections(self.base_url, {
            "authorization": f"Bearer {settings.api_key or KEYLESS_PLACEHOLDER}"}) \
            if lean_transport_applies(self.base_url) else None
        """Set when the server is reached without the package (see the class docstring)."""
        self._semaphore = asyncio.Semaphore(settings.concurrency)
        self._sleep = sleep
        self.retries = 0
        """Retries made so far (all requests)."""

    @property
    def needs_key(self) -> bool:
        """Whether the server is the official API and no key was found (every call would be refused)."""
        return self.base_url == OFFICIAL_BASE_URL and not self.settings.api_key

    def _openai(self) -> Any:
        """The ``AsyncOpenAI`` client, made on first use inside the running loop (its pool belongs to that loop)."""
        if self._client is None:
            import openai

            limits = type(openai.DEFAULT_CONNECTION_LIMITS)(max_connections=self.settings.concurrency,
                                                             max_keepalive_connections=self.settings.concurrency)
            self._client = openai.AsyncOpenAI(
                base_url=self.base_url, api_key=self.settings.api_key or KEYLESS_PLACEHOLDER, max_retries=0,
                timeout=self.settings.timeout_s,
                http_client=openai.DefaultAsyncHttpxClient(limits=limits, timeout=self.settings.timeout_s),
            )
        return self._client

    async def chat(self, body: dict[str, Any]) -> ChatReply:
        """Send one chat completion request and return its reply.

        Args:
            body: the JSON request body (``model``, ``messages``, ``temperature``...), sent as given.

        Raises:
            ChatCallError: the request failed after ``max_retries`` retries, or failed in a way retrying cannot fix.
        """
        attempt = 0
        while True:
            attempt += 1
            async with self._semaphore:
                outcome = await self._attempt(body)
            if isinstance(outcome, ChatReply):
                return replace(outcome, attempts=attempt)
            if not outcome.retryable or attempt > self.settings.max_retries:
                tries = f" after {attempt} attempts" if attempt > 1 else ""
                raise ChatCallError(f"{outcome.message}{tries}")
            self.retries += 1
            await self._sleep(self._delay(attempt, outcome.retry_after_s))

    async def fetch(self, send: Callable[[Any], Awaitable[bytes]]) -> bytes:
        """One request other than a chat completion (e.g. the images API) with the same retries; its 2xx body.

        Args:
            send: given the ``AsyncOpenAI`` client, makes the request and returns the raw body.

        Raises:
            ChatCallError: the request failed after ``max_retries`` retries, or failed in a way retrying cannot fix.
        """
        attempt = 0
        while True:
            attempt += 1
            async with self._semaphore:
                outcome = await self._exchange(send)
            if not isinstance(outcome, _Failure):
                return outcome
            if not outcome.retryable or attempt > self.settings.max_retries:
                tries = f" after {attempt} attempts" if attempt > 1 else ""
                raise ChatCallError(f"{outcome.message}{tries}")
            self.retries += 1
            await self._sleep(self._delay(attempt, outcome.retry_after_s))

    def _delay(self, attempt: int, retry_after_s: float | None) -> float:
        if retry_after_s is not None:
            return min(retry_after_s, MAX_RETRY_AFTER_S)
        base = min(self.settings.backoff_s * 2 ** (attempt - 1), self.settings.max_backoff_s)
        return base * random.uniform(0.5, 1.5)  # jitter: many rows retrying at once must not retry in lockstep

    async def _exchange(self, send: Callable[[Any], Awaitable[bytes]]) -> bytes | _Failure:
        """One HTTP exchange through the package: the body of a 2xx answer, or the failure (transport or status)."""
        import openai

        try:
            raw = await send(self._openai())
        except openai.APITimeoutError:
            return _Failure(f"timed out after {self.settings.timeout_s:g} s waiting for {self.where}", True)
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            return _Failure(self.scrub(f"cannot reach {self.where} ({type(cause).__name__}: {cause})"), True)
        except openai.APIStatusError as exc:
            code, said = exc.status_code, self.scrub(_error_message(exc.response.content))
            return _Failure(f"HTTP {code} from {self.where}: {said}", code in RETRYABLE_STATUS or code >= 500,
                            parse_retry_after(exc.response.headers.get("retry-after")), status=code, said=said)
        return raw

    async def _lean_exchange(self, method: str, path: str, body: dict[str, Any] | None) -> bytes | _Failure:
        """One HTTP exchange through the keep-alive connections, with the failures worded as :meth:`_exchange`'s."""
        assert self._connections is not None
        data = None if body is None else json.dumps(body).encode()
        try:
            response: HttpResponse = await asyncio.wait_for(self._connections.request(method, path, data),
                                                            self.settings.timeout_s)
        except asyncio.TimeoutError:
            return _Failure(f"timed out after {self.settings.timeout_s:g} s waiting for {self.where}", True)
        except ResponseTooLarge as exc:
            retryable = exc.status in RETRYABLE_STATUS or exc.status >= 500
            return _Failure(f"{exc} from {self.where}", retryable, status=exc.status or None, said=str(exc))
        except (OSError, h11.ProtocolError) as exc:
            return _Failure(self.scrub(f"cannot reach {self.where} ({type(exc).__name__}: {exc})"), True)
        if 200 <= response.status < 300:
            return response.body
        code, said = response.status, self.scrub(_error_message(response.body))
        return _Failure(f"HTTP {code} from {self.where}: {said}", code in RETRYABLE_STATUS or code >= 500,
                        parse_retry_after(response.headers.get("retry-after")), status=code, said=said)

    async def _attempt(self, body: dict[str, Any]) -> ChatReply | _Failure:
        # The body goes out as given (server-specific keys such as vLLM's need no ``extra_body``) and the reply comes
        # back as bytes, which ``_parse`` checks (a garbage 200 is retryable). Through the package: its generic POST.
        if self._connections is not None:
            response = await self._lean_exchange("POST", "/chat/completions", body)
        else:
            response = await self._exchange(lambda client: client.post("/chat/completions", body=body,
                                                                        cast_to=bytes))
        if isinstance(response, _Failure):
            return response
        return self._parse(response)

    def _parse(self, content: bytes) -> ChatReply | _Failure:
        try:
            data = json.loads(content)
            message = data["choices"][0]["message"]
            text = message.get("content")
            if text is None and message.get("refusal"):
                text = str(message["refusal"])
            if not isinstance(text, str):
                raise TypeError("no text content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            snippet = self.scrub(repr(content[:80].decode("utf-8", "replace")))
            return _Failure(f"not a chat completion from {self.where}: {snippet}", True)
        if len(text) > MAX_REPLY_CHARS:
            return _Failure(f"the reply from {self.where} holds {len(text):,} characters, over the limit of "
                            f"{MAX_REPLY_CHARS:,} (MAX_REPLY_CHARS)", False)
        usage = data.get("usage")
        try:
            prompt_logprobs = parse_prompt_logprobs(data.get("prompt_logprobs"))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            snippet = self.scrub(repr(content[:80].decode("utf-8", "replace")))
            return _Failure(f"unreadable prompt_logprobs from {self.where}: {snippet}", True)
        return ChatReply(text, _token_count(usage, "prompt_tokens"), _token_count(usage, "completion_tokens"),
                         prompt_logprobs=prompt_logprobs)

    async def probe(self, model: str) -> None:
        """Check at start-up that the server answers, accepts the key and serves ``model``.

        Raises:
            BadInputError: unreachable server, refused key, or an unknown model (exit status 2).
        """
        response = await (self._lean_exchange("GET", "/models", None) if self._connections is not None else
                          self._exchange(lambda client: client.get("/models", cast_to=bytes)))
        if isinstance(response, _Failure):
            if response.status in (404, 405):
                await self._probe_with_chat(model)  # some servers have no /models: a 1-token call tells the same
                return
            if response.status in (401, 403):
                raise BadInputError(f"{self.where} refused the API key (HTTP {response.status}); "
                                    "check OPENAI_API_KEY / MMBATCH_JUDGE_API_KEY")
            if response.status is not None:
                raise BadInputError(f"{self.where} answered HTTP {response.status} to a probe: {response.said}")
            raise BadInputError(f"cannot reach {self.where}; is the server running and the URL right? "
                                f"({response.message})")
        try:
            served = [str(item["id"]) for item in json.loads(response)["data"]]
        except (ValueError, KeyError, TypeError):
            raise BadInputError(f"{self.where}/models is not an OpenAI-compatible model list") from None
        if served and model not in served:
            shown = ", ".join(served[:10]) + (" ..." if len(served) > 10 else "")
            raise BadInputError(f"{self.where} does not serve model {model!r} (it serves: {shown})")

    async def _probe_with_chat(self, model: str) -> None:
        body = {"model": model, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1}
        outcome = await self._attempt(body)
        if isinstance(outcome, _Failure):
            raise BadInputError(f"the probe of {self.where} failed: {outcome.message}")

    def scrub(self, text: str) -> str:
        """``text`` without the API key in any echoed form (:mod:`mmbatch.secret_values`), nor anything shaped like
        an OpenAI key (servers echo parts of a wrong key in their messages)."""
        register_secret(self.settings.api_key)
        text = scrub_text(text)
        return re.sub(r"sk-[A-Za-z0-9_\-*]{3,}", "sk-***", text)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._connections is not None:
            await self._connections.aclose()
        if self._client is not None:
            await self._client.close()
            self._client = None


def check_base_url(url: str) -> None:
    """Refuse a base URL that no HTTP client can use, with the reason (a typo must not become a traceback).

    Raises:
        BadInputError: no ``http``/``https`` scheme, no host, a bad port, or spaces.
    """
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018  (parsing the port raises for a non-numeric or out-of-range one)
    except ValueError as exc:
        raise BadInputError(f"the base URL {url!r} is malformed ({exc}); expected e.g. http://localhost:8000/v1") \
            from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise BadInputError(f"the base URL {url!r} is malformed: it needs http:// or https://, a host, and no "
                            "spaces, e.g. http://localhost:8000/v1")


def _token_count(usage: Any, name: str) -> int:
    """A token count from ``usage``; 0 when absent or not a whole number (a server's bad usage must not fail a row
    whose answer is fine)."""
    value = usage.get(name) if isinstance(usage, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) == float("inf"):
        return 0
    return max(0, int(value))


def parse_prompt_logprobs(value: Any) -> tuple[tuple[int, float | None], ...] | None:
    """vLLM's ``prompt_logprobs`` (``[null, {"TOKEN_ID": {"logprob": -1.2, ...}}, ...]``) as (token id, log-prob).

    The request asks for 0 alternatives, so each position holds exactly its own token; a position with several
    entries cannot say which one is the prompt's, so it is refused rather than guessed.

    Raises:
        ValueError: A position holds no entry or several.
    """
    if value is None:
        return None
    parsed: list[tuple[int, float | None]] = []
    for position in value:
        if position is None:
            parsed.append((-1, None))
            continue
        if len(position) != 1:
            raise ValueError(f"{len(position)} entries at one prompt position")
        ((token, entry),) = position.items()
        parsed.append((int(token), float(entry["logprob"])))
    return tuple(parsed)


def _error_message(content: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the start of the body."""
    try:
        message = str(json.loads(content)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return repr(content[:200].decode("utf-8", "replace"))
    if len(message) > MAX_MESSAGE_CHARS:
        message = f"{message[:MAX_MESSAGE_CHARS]}... ({len(message) - MAX_MESSAGE_CHARS:,} more characters cut)"
    return message


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if value is None or not value.strip():
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class EventLoopRunner:
    """An event loop the synchronous stages drive: run one coroutine, or many with results as they finish.

    The loop runs only while the caller waits for the next result, so no thread is involved and the caller's code
    (committing results, updating the cache and the progress bar) never races with the requests.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coroutine: Awaitable[T]) -> T:
        """Run ``coroutine`` to completion."""
        return self.loop.run_until_complete(coroutine)

    def as_completed(self, items: Iterable[T], work: Callable[[T], Awaitable[R]], *, window: int) -> Iterator[R]:
        """``work(item)`` for every item, at most ``window`` started at once; yields results as they finish.

        Items are started in order, so the first rows finish first and a killed run leaves few gaps. Closing the
        iterator early cancels what is still running.
        """
        pending: set[asyncio.Task[R]] = set()
        source = iter(items)
        try:
            self._fill(pending, source, work, window)
            while pending:
                done, _ = self.loop.run_until_complete(asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED))
                pending -= done
                self._fill(pending, source, work, window)
                for task in done:
                    yield task.result()
        finally:
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

    def _fill(self, pending: set[asyncio.Task[R]], source: Iterator[T], work: Callable[[T], Awaitable[R]],
              window: int) -> None:
        while len(pending) < window:
            try:
                item = next(source)
            except StopIteration:
                return
            pending.add(self.loop.create_task(_as_coroutine(work(item))))

    def close(self) -> None:
        """Close the loop."""
        self.loop.close()


async def _as_coroutine(awaitable: Awaitable[R]) -> R:
    return await awaitable
