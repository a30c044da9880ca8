"""Packages that only some commands need, and the install command to give when one is missing.

The base install (the ``light`` image) has no torch: a command that needs a package it lacks stops with exit 2 and
the command that installs it, never with a traceback (``infer --backend hf`` in the light image, ``extract
--clip-model`` without torch).
"""

from __future__ import annotations

from mmbatch.errors import BadInputError

INSTALL_COMMANDS: dict[str, str] = {
    **dict.fromkeys(("torch", "transformers", "accelerate", "decord", "av", "num2words", "PIL"),
                    "pip install 'mmbatch[infer]' (the mmbatch:full image has it)"),
    "diffusers": "pip install 'mmbatch[diffusers]' (the mmbatch:full image has it)",
    "vllm": "pip install vllm on a CUDA machine (docs/models.md; no mmbatch image has it)",
    "ray": "pip install 'mmbatch[ray]' (the mmbatch:full image has it)",
}
"""Top-level module -> how to get it."""


def missing_package(exc: ModuleNotFoundError, what: str) -> BadInputError | None:
    """The exit-2 error for ``what`` (``--backend hf``, ``--clip-model``) when ``exc`` is a missing optional package;
    None when it is anything else (a module of mmbatch itself missing is a bug, and stays a traceback)."""
    top = (exc.name or "").partition(".")[0]
    if not top or top == "mmbatch":
        return None
    install = INSTALL_COMMANDS.get(top, f"pip install {top}")
    return BadInputError(f"{what} needs the {top} package, which is not installed here: {install}")
