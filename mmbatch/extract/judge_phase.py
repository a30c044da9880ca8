"""Runs the judge over the rows the rules left open: concurrent, cached, group-aware, committed as it goes.

CircularEval (MMBench): once a row of a group is known wrong the group has failed, so VLMEvalKit asks nothing more
about it. mmbatch reproduces which rows get asked, deterministically and still concurrently: each group's open rows
are asked one after another, in index order, until one is known wrong; rows left in a failed group are left
unmatched, with a note. Groups run concurrently, each at its own pace: a group's next row is asked as soon as its
previous one is judged, never waiting for other groups' rows of the same rank (a round of all groups waits for its
slowest request). Which rows are asked depends only on each group's own replies.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from mmbatch.errors import BadInputError
from mmbatch.event_loop_runner import EventLoopRunner
from mmbatch.extract.judge import Judge, JudgeStats, random_fallback
from mmbatch.extract.judge_cache import JudgeCache, default_cache_path
from mmbatch.extract.options import ExtractOptions
from mmbatch.extract.outcome import JudgeTask, Outcome
from mmbatch.extract.rule_pass import kind_settings
from mmbatch.openai_client import JUDGE_KEY_VARIABLES, ChatClient, ClientSettings, api_key_from_environment
from mmbatch.progress import progress
from mmbatch.row_facts import GROUP_FAILED_NOTE

COMMIT_EVERY_S = 2.0
"""Seconds between commits of judged rows (each reply is already in the cache the moment it arrives)."""
COMMIT_EVERY_ROWS = 1000


Commit = Callable[[list[tuple[int, Outcome]]], None]


class JudgeSession:
    """The judge's resources for one run: cache, client and event loop. Use as a context manager."""

    def __init__(self, options: ExtractOptions) -> None:
        self.options = options
        cache_path = Path(options.judge_cache or default_cache_path(options.output))
        self._created_cache = not cache_path.exists()
        self._cache_removed = False
        self.cache = JudgeCache(cache_path)
        self.runner = EventLoopRunner()
        self.client = ChatClient(_client_settings(options))
        self.judge = Judge(self.client, self.cache, options.judge_model, kind_settings(options))

    def __enter__(self) -> JudgeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.runner.run(self.client.aclose())
        self.runner.close()
        if not self._cache_removed:
            self.cache.close()

    def ensure_ready(self, tasks: Sequence[JudgeTask]) -> None:
        """Fail now, before anything is written, if the judge is needed and cannot be reached.

        Raises:
            BadInputError: no key for the official API, or the server is unreachable or misconfigured.
        """
        if all(self.judge.is_cached(task) for task in tasks):
            return  # everything was asked before: a rerun works even with the server gone
        try:
            if self.client.needs_key:
                raise BadInputError("the judge needs an API key: set OPENAI_API_KEY or MMBATCH_JUDGE_API_KEY, or "
                                    "point --judge-base-url at your own server, or pass --no-judge for rules only")
            self.runner.run(self.client.probe(self.options.judge_model))
        except BadInputError:
            self._remove_unused_cache()
            raise

    def _remove_unused_cache(self) -> None:
        """A judge refused at start leaves no trace: the cache file this run created (still empty) goes."""
        if not self._created_cache or len(self.cache):
            return
        self.cache.close()
        self._created_cache = False  # closed and gone: __exit__ must not close it again
        self._cache_removed = True
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.cache.path}{suffix}").unlink(missing_ok=True)

    def decide(self, tasks: Sequence[JudgeTask], failed_groups: set[object], commit: Commit) -> int:
        """Decide every task, calling ``commit`` with finished rows as they come; returns the rows skipped.

        ``failed_groups``: the groups already known wrong (their rows are not asked under CircularEval).
        """
        started = time.monotonic()
        try:
            return _judge_groups(tasks, failed_groups, self.options, self.judge, self.runner, commit)
        finally:
            self.judge.stats.judge_s += time.monotonic() - started

    @property
    def stats(self) -> JudgeStats:
        """Calls, cache hits and tokens so far."""
        return self.judge.stats


def _client_settings(options: ExtractOptions) -> ClientSettings:
    return ClientSettings(
        base_url=options.judge_base_url,
        api_key=api_key_from_environment(JUDGE_KEY_VARIABLES),
        concurrency=options.concurrency,
        timeout_s=options.request_timeout_s,
        max_retries=options.max_retries,
        backoff_s=options.retry_backoff_s,
    )


def _chains(tasks: Sequence[JudgeTask], failed_groups: set[object], skip_failed: bool
            ) -> tuple[list[list[JudgeTask]], list[JudgeTask]]:
    """(chains of tasks to ask one after another, tasks left unasked because their group failed already).

    With ``skip_failed``, a chain is one group's tasks in index order; without, every task is a chain of its own.
    """
    if not skip_failed:
        return [[task] for task in tasks], []
    chains: dict[object, list[JudgeTask]] = {}
    for task in sorted(tasks, key=lambda t: t.index):
        chains.setdefault(task.group, []).append(task)
    skipped = [task for group, chain in chains.items() if group in failed_groups for task in chain]
    return [chain for group, chain in chains.items() if group not in failed_groups], skipped


def _judge_groups(tasks: Sequence[JudgeTask], failed_groups: set[object], options: ExtractOptions, judge: Judge,
                  runner: EventLoopRunner, commit: Commit) -> int:
    chains, skip = _chains(tasks, failed_groups, options.skip_failed_groups)
    buffer: list[tuple[int, Outcome]] = []
    last_commit = time.monotonic()

    async def ask(chain: list[JudgeTask]) -> tuple[list[tuple[JudgeTask, Outcome]], list[JudgeTask]]:
        """The chain's rows judged in order until one is known wrong; (judged, left unasked)."""
        judged = []
        for position, task in enumerate(chain):
            outcome = _fallback(task, await judge.decide(task), options)
            judged.append((task, outcome))
            if is_known_wrong(outcome, task.answer):
                return judged, chain[position + 1:]
        return judged, []

    with progress("judge", total=len(tasks), unit="rows") as bar:
        skipped = len(skip)
        buffer.extend((task.index, Outcome(None, "unmatched", note=GROUP_FAILED_NOTE)) for task in skip)
        bar.advance(len(skip))
        for judged, left in runner.as_completed(chains, ask, window=2 * options.concurrency):
            skipped += len(left)
            buffer.extend((task.index, outcome) for task, outcome in judged)
            buffer.extend((task.index, Outcome(None, "unmatched", note=GROUP_FAILED_NOTE)) for task in left)
            calls, tokens = judge.stats.calls, judge.stats.prompt_tokens + judge.stats.completion_tokens
            bar.advance(len(judged) + len(left), calls=calls - bar.counters.get("calls", 0),
                        tokens=tokens - bar.counters.get("tokens", 0))
            if len(buffer) >= COMMIT_EVERY_ROWS or time.monotonic() - last_commit >= COMMIT_EVERY_S:
                commit(buffer)
                buffer, last_commit = [], time.monotonic()
        commit(buffer)
    return skipped


def is_known_wrong(outcome: Outcome, answer: str | None) -> bool:
    """Whether a decided row is certainly wrong: scored, not failed, and not the ground truth."""
    if answer is None or outcome.method == "error":
        return False
    return outcome.extracted is None or outcome.extracted.strip() != answer


def _fallback(task: JudgeTask, outcome: Outcome, options: ExtractOptions) -> Outcome:
    """``--unmatched random``: VLMEvalKit's random letter for MCQ rows the judge could not match."""
    if options.unmatched != "random" or outcome.method != "unmatched" or not task.judge.random_fallback:
        return outcome
    letter = random_fallback(task.choices, options.seed, task.index)
    note = f"{outcome.note}; random fallback (--unmatched random --seed {options.seed})"
    return Outcome(letter, "unmatched", outcome.judge_model, outcome.judge_raw, note=note)
