"""Model backends: one module each, registered by name and imported only when chosen."""

from __future__ import annotations

BACKENDS: dict[str, str] = {
    "hf": "mmbatch.backends.hf",
    "openai": "mmbatch.backends.openai_chat",
    "echo": "mmbatch.backends.echo",
    "diffusers": "mmbatch.backends.diffusers_images",
}
"""``--backend`` name -> module providing ``create_backend(options) -> Backend``."""

IMAGE_GENERATORS: frozenset[str] = frozenset({"echo", "diffusers", "openai"})
"""Backends that answer ``generate-image`` rows (their module's backend has ``generate_images``); ``infer`` refuses
the others before loading a model when the input has such rows."""
