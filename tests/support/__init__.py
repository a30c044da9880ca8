"""Test support code shared by several test modules."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def single_torch_thread() -> Iterator[None]:
    """Run torch on one CPU thread inside the block, then restore the previous count.

    The test machine's two cores are shared by many processes; torch's two spinning worker threads then wait on each
    other and tiny models run 10-20x slower than on one thread.
    """
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
