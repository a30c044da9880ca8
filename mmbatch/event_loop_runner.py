"""A bridge from the synchronous stages to asynchronous requests: results as each one finishes.

The judge and the ``openai`` infer backend run their requests on one event loop that this module drives; the loop
runs only while the caller waits for the next result, so no thread is involved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


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
