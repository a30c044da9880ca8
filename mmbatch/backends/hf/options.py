"""The ``hf`` backend's options (``--backend-arg`` keys; the flags of the same name fill them too)."""

from __future__ import annotations

from dataclasses import dataclass

from mmbatch.backends.base import BATCHES_PER_CHUNK, MIN_CHUNK_ROWS, BackendOptions


@dataclass(frozen=True)
class HfOptions(BackendOptions):
    """Options of a local ``transformers`` model."""

    revision: str | None = None
    """Model revision (a branch, tag or commit of the hub repository)."""
    dtype: str = "auto"
    """``auto``, ``bfloat16``, ``float16`` or ``float32``."""
    device: str = "auto"
    """``auto`` (CUDA when present), ``cpu``, ``cuda`` or ``cuda:N``."""
    batch_size: int = 8
    """Rows per forward pass; greedy outputs do not depend on it."""

    def chunk_rows(self) -> int:
        """A few batches: their decoded images and video frames, two chunks of them, stay in memory."""
        return max(MIN_CHUNK_ROWS, BATCHES_PER_CHUNK * self.batch_size)
