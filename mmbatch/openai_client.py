"""An async client for OpenAI-compatible chat endpoints, shared by the judge and the ``openai`` infer backend.

What it does: many requests in flight (a semaphore of ``concurrency``), its own retries
(exponential backoff with jitter on 429, 5xx, timeouts, dropped connections and garbage bodies, honouring
``Retry-After``: :mod:`mmbatch.retry_policy`), replies read and checked by :mod:`mmbatch.openai_replies`, and a
start-up probe that turns an unreachable or misconfigured server into one clear error. The synchronous stages drive
it through :class:`mmbatch.event_loop_runner.EventLoopRunner`, consuming results as each request finishes.

The API key is read from the environment and never appears in a message, a log line or a file: error texts from
the server are scrubbed of it before they go anywhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import h11

from mmbatch.errors import BadInputError
from mmbatch.http_transport import HttpResponse, KeepAliveConnections, ResponseTooLarge, lean_transport_applies
from mmbatch.openai_replies import ChatReply, parse_chat_completion, server_error_message
from mmbatch.retry_policy import AttemptFailure, backoff_delay, parse_retry_after, status_is_retryable
from mmbatch.secret_values import register_secret, scrub_text
from mmbatch.server_urls import OFFICIAL_BASE_URL, resolved_base_url, without_credentials

JUDGE_KEY_VARIABLES = ("MMBATCH_JUDGE_API_KEY", "OPENAI_API_KEY")
"""Where the judge's key is read from, first found wins."""
INFER_KEY_VARIABLES = ("OPENAI_API_KEY",)
"""Where the ``openai`` backend's key is read from."""
KEYLESS_PLACEHOLDER = "EMPTY"
"""The key sent to servers that need none (vLLM's convention); the ``openai`` package refuses to run without one."""

T = TypeVar("T")


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
    """The first non-empty key among ``variables``, registered for scrubbing (:mod:`mmbatch.secret_values`).

    Raises:
        BadInputError: the key holds a character that is not printable ASCII, which no HTTP header can carry (a key
            copied with a typographic dash or quote); the message names the variable, never the key.
    """
    for name in variables:
        value = os.environ.get(name, "").strip()
        if value:
            register_secret(value)
            if not (value.isascii() and value.isprintable()):
                raise BadInputError(f"the API key in {name} holds a character that is not printable ASCII (an HTTP "
                                    "header cannot carry it): copy the key again, as plain text")
            return value
    return None


class ChatCallError(Exception):
    """A request that still failed after its retries (or failed for good at once, e.g. HTTP 400)."""


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
        self.base_url = resolved_base_url(settings.base_url)
        check_base_url(self.base_url)
        self.where = "the official OpenAI API" if self.base_url == OFFICIAL_BASE_URL else \
            without_credentials(self.base_url)
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
        reply, attempts = await self._with_retries(lambda: self._attempt(body))
        # A server (or a proxy before it) may echo the key in its reply: scrubbed here, where it arrives, so that no
        # cell, cache entry or message gets it.
        return replace(reply, text=scrub_text(reply.text), attempts=attempts)

    async def fetch(self, send: Callable[[Any], Awaitable[bytes]]) -> bytes:
        """One request other than a chat completion (e.g. the images API) with the same retries; its 2xx body.

        Args:
            send: given the ``AsyncOpenAI`` client, makes the request and returns the raw body.

        Raises:
            ChatCallError: the request failed after ``max_retries`` retries, or failed in a way retrying cannot fix.
        """
        body, _ = await self._with_retries(lambda: self._exchange(send))
        return body

    async def _with_retries(self, attempt_once: Callable[[], Awaitable[T | AttemptFailure]]) -> tuple[T, int]:
        """``attempt_once`` (each under the semaphore) until it succeeds; its result and the attempts it took.

        Raises:
            ChatCallError: the last failure, after ``max_retries`` retries or at once when retrying cannot fix it.
        """
        attempt = 0
        while True:
            attempt += 1
            async with self._semaphore:
                outcome = await attempt_once()
            if not isinstance(outcome, AttemptFailure):
                return outcome, attempt
            if not outcome.retryable or attempt > self.settings.max_retries:
                tries = f" after {attempt} attempts" if attempt > 1 else ""
                raise ChatCallError(f"{outcome.message}{tries}")
            longest = max(self.settings.max_backoff_s, self.settings.timeout_s)
            if outcome.retry_after_s is not None and outcome.retry_after_s > longest:
                # a server asking for hours must not hold a row (and its slot) that long: it fails now, and a
                # rerun asks again later
                raise ChatCallError(f"{outcome.message}; it asks to retry after {outcome.retry_after_s:g} s, longer "
                                    f"than a row waits ({longest:g} s: the larger of --timeout and "
                                    f"{self.settings.max_backoff_s:g} s); rerun later to retry the row")
            self.retries += 1
            await self._sleep(backoff_delay(attempt, outcome.retry_after_s, backoff_s=self.settings.backoff_s,
                                            max_backoff_s=self.settings.max_backoff_s))

    async def _exchange(self, send: Callable[[Any], Awaitable[bytes]]) -> bytes | AttemptFailure:
        """One HTTP exchange through the package: the body of a 2xx answer, or the failure (transport or status)."""
        import openai

        try:
            raw = await send(self._openai())
        except openai.APITimeoutError:
            return AttemptFailure(f"timed out after {self.settings.timeout_s:g} s waiting for {self.where}", True)
        except openai.APIConnectionError as exc:
            return self._transport_failure(exc)
        except openai.APIStatusError as exc:
            code, said = exc.status_code, self.scrub(server_error_message(exc.response.content))
            return AttemptFailure(f"HTTP {code} from {self.where}: {said}", status_is_retryable(code),
                            parse_retry_after(exc.response.headers.get("retry-after")), status=code, said=said)
        return raw

    async def _lean_exchange(self, method: str, path: str, body: dict[str, Any] | None) -> bytes | AttemptFailure:
        """One HTTP exchange through the keep-alive connections, with the failures worded as :meth:`_exchange`'s."""
        assert self._connections is not None
        data = None if body is None else json.dumps(body).encode()
        try:
            response: HttpResponse = await asyncio.wait_for(self._connections.request(method, path, data),
                                                            self.settings.timeout_s)
        except asyncio.TimeoutError as exc:
            # The kernel's own ETIMEDOUT, not our wait: since 3.11 asyncio.TimeoutError is the builtin TimeoutError,
            # an OSError with an errno; on 3.10 it is asyncio's own class without one (ETIMEDOUT then lands below).
            if getattr(exc, "errno", None) is not None:
                return self._transport_failure(exc)
            return AttemptFailure(f"timed out after {self.settings.timeout_s:g} s waiting for {self.where}", True)
        except ResponseTooLarge as exc:
            retryable = status_is_retryable(exc.status)
            return AttemptFailure(f"{exc} from {self.where}", retryable, status=exc.status or None, said=str(exc))
        except (OSError, h11.ProtocolError) as exc:
            return self._transport_failure(exc)
        if 200 <= response.status < 300:
            return response.body
        code, said = response.status, self.scrub(server_error_message(response.body))
        return AttemptFailure(f"HTTP {code} from {self.where}: {said}", status_is_retryable(code),
                        parse_retry_after(response.headers.get("retry-after")), status=code, said=said)

    def _transport_failure(self, exc: BaseException) -> AttemptFailure:
        """A connection that failed, worded by its real cause (the innermost of the chain the HTTP libraries wrap
        it in): a reset is a reset, said at once, never a timeout."""
        causes = [exc]
        while (inner := causes[-1].__cause__ or causes[-1].__context__) is not None and len(causes) < 10:
            causes.append(inner)
        detail = next((c for c in reversed(causes) if str(c).strip()), causes[-1])
        described = f"{type(detail).__name__}: {detail}" if str(detail).strip() else type(detail).__name__
        if any(isinstance(c, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)) for c in causes):
            return AttemptFailure(self.scrub(f"the connection was reset by {self.where} ({described})"), True)
        return AttemptFailure(self.scrub(f"cannot reach {self.where} ({described})"), True)

    async def _attempt(self, body: dict[str, Any]) -> ChatReply | AttemptFailure:
        # The body goes out as given (server-specific keys such as vLLM's need no ``extra_body``) and the reply comes
        # back as bytes, which ``parse_chat_completion`` checks (a garbage 200 is retryable). Through the package:
        # its generic POST.
        if self._connections is not None:
            response = await self._lean_exchange("POST", "/chat/completions", body)
        else:
            response = await self._exchange(lambda client: client.post("/chat/completions", body=body,
                                                                        cast_to=bytes))
        if isinstance(response, AttemptFailure):
            return response
        return parse_chat_completion(response, where=self.where, scrub=self.scrub)

    async def probe(self, model: str) -> None:
        """Check at start-up that the server answers, accepts the key and serves ``model``.

        Raises:
            BadInputError: unreachable server, refused key, or an unknown model (exit status 2).
        """
        response = await (self._lean_exchange("GET", "/models", None) if self._connections is not None else
                          self._exchange(lambda client: client.get("/models", cast_to=bytes)))
        if isinstance(response, AttemptFailure):
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
        if isinstance(outcome, AttemptFailure):
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

    shown = without_credentials(url)
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018  (parsing the port raises for a non-numeric or out-of-range one)
    except ValueError as exc:
        raise BadInputError(f"the base URL {shown!r} is malformed ({exc}); expected e.g. http://localhost:8000/v1") \
            from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise BadInputError(f"the base URL {shown!r} is malformed: it needs http:// or https://, a host, and no "
                            "spaces, e.g. http://localhost:8000/v1")
