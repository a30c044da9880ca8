"""The LLM judge: asks about one row, tries a few times, parses the reply with its answer kind's rule
(docs/rules.md §4).

Every try goes through the cache first; a reply is stored the moment it arrives. The judge never guesses: a row it
cannot match stays unmatched, and a row whose call failed (after the client's retries) is an error, retried by the
next run.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from mmbatch.answers.kind import KindSettings
from mmbatch.answers.letters import NONE_OF_THE_OPTIONS
from mmbatch.extract.judge_cache import JudgeCache, judge_identity
from mmbatch.extract.outcome import JudgeTask, Outcome
from mmbatch.openai_client import ChatCallError, ChatClient


@dataclass
class JudgeStats:
    """What the judge cost so far."""

    calls: int = 0
    """Requests answered by the server (cache hits not counted)."""
    cache_hits: int = 0
    """Tries answered from the cache."""
    prompt_tokens: int = 0
    """Input tokens of the calls made."""
    completion_tokens: int = 0
    """Output tokens of the calls made."""
    failed_calls: int = 0
    """Calls that still failed after their retries."""
    judge_s: float = 0.0
    """Wall seconds spent judging (all rounds)."""


class Judge:
    """Decides judge tasks with one model through one client and one cache."""

    def __init__(self, client: ChatClient, cache: JudgeCache, model: str, settings: KindSettings) -> None:
        self.client = client
        self.cache = cache
        self.model = model
        self.settings = settings
        self.identity = judge_identity(model, client.base_url)
        """The cache's key for this judge: the model on this server."""
        self.stats = JudgeStats()

    def is_cached(self, task: JudgeTask) -> bool:
        """Whether the first try of ``task`` is already in the cache (no server needed for it)."""
        return self.cache.get(self.identity, task.prompt, 0, task.judge.temperatures[0]) is not None

    async def decide(self, task: JudgeTask) -> Outcome:
        """Ask about ``task`` until a reply parses (by its kind's rule), or the tries run out, or a call fails."""
        raw: str | None = None
        for attempt, temperature in enumerate(task.judge.temperatures):
            try:
                raw = await self._reply(task.prompt, attempt, temperature)
            except ChatCallError as exc:
                self.stats.failed_calls += 1
                return Outcome(None, "error", self.model, raw, note="judge call failed", error=f"judge: {exc}")
            verdict = task.judge.parse(raw, task.choices, self.settings)
            if verdict is not None:
                return Outcome(verdict.extracted, "judge", self.model, raw, note=verdict.note)
        tries = len(task.judge.temperatures)
        return Outcome(None, "unmatched", self.model, raw, note=f"the judge matched nothing in {tries} tries")

    async def _reply(self, prompt: str, attempt: int, temperature: float) -> str:
        cached = self.cache.get(self.identity, prompt, attempt, temperature)
        if cached is not None:
            self.stats.cache_hits += 1
            return cached.text
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}], "temperature": temperature}
        reply = await self.client.chat(body)
        self.stats.calls += 1
        self.stats.prompt_tokens += reply.prompt_tokens
        self.stats.completion_tokens += reply.completion_tokens
        self.cache.put(self.identity, prompt, attempt, temperature, reply.text, prompt_tokens=reply.prompt_tokens,
                       completion_tokens=reply.completion_tokens)
        return reply.text


def random_fallback(choices: Mapping[str, str], seed: int, index: int) -> str:
    """VLMEvalKit's last resort, reproducible: a random pick among the options and ``Z``.

    The generator is seeded with ``seed`` and the row's index, so a row's letter does not depend on the order in
    which rows were judged, on resumes or on shards.
    """
    letters = list(choices)
    if NONE_OF_THE_OPTIONS not in letters:
        letters.append(NONE_OF_THE_OPTIONS)
    return random.Random(f"{seed}:{index}").choice(letters)
