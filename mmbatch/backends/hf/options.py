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
    device_map: str | None = None
    """``auto`` (or ``balanced``, ``sequential``) spreads a model larger than one GPU over the GPUs and, past them,
    the CPU (accelerate's dispatch); None puts the whole model on ``device``."""
    max_memory: str | None = None
    """With ``device_map``: memory each device may hold, ``0=70GiB,1=70GiB,cpu=200GiB``."""
    attn_implementation: str | None = None
    """``eager``, ``sdpa`` or ``flash_attention_2`` (None: transformers' default for the model)."""
    trust_remote_code: bool = False
    """Run the model repository's own Python code (models not in transformers); off unless asked for."""
    video_as: str | None = None
    """Video rows given as ``video`` (the sampled frames as one video, to a processor that takes video) or
    ``frames`` (as that many images); None: as the family's authors evaluated it (``mmbatch.backends.hf.video``)."""

    def chunk_rows(self) -> int:
        """A few batches: their decoded images and video frames, two chunks of them, stay in memory."""
        return max(MIN_CHUNK_ROWS, BATCHES_PER_CHUNK * self.batch_size)
