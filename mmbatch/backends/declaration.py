"""The :class:`BackendDeclaration`: what ``infer`` and the CLI need to know about a backend before loading it.

Each backend module is registered in :mod:`mmbatch.backends.registry` with one declaration: its name, where its
``create_backend`` and its options class live, and which of its options change predictions (``resume_keys``). The
options class (a frozen subclass of :class:`~mmbatch.backends.base.BackendOptions`) declares every setting the
backend reads, with a docstring per field; :func:`mmbatch.backends.options.backend_options` fills it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackendDeclaration:
    """One ``--backend``."""

    name: str
    """The ``--backend`` value."""
    summary: str
    """One line for ``--help``."""
    module: str
    """Module providing ``create_backend(options) -> Backend``, imported only when chosen (torch, openai...)."""
    options: str
    """``module:attribute`` of its options class, a frozen subclass of
    :class:`~mmbatch.backends.base.BackendOptions`."""
    resume_keys: tuple[str, ...]
    """Fields of the options class that change predictions: a rerun resumes only when they are unchanged
    (``model`` and ``temperature`` always count; batch sizes, devices and concurrency do not)."""
    resume_keys_when_set: tuple[str, ...] = ()
    """More fields that change predictions, recorded only when not at their default, so that progress recorded
    before they existed still resumes when they are not used."""
    libraries: tuple[str, ...] = ()
    """Packages whose versions shape its results (``transformers``'s image processors...): their installed versions
    are part of the resume settings (:mod:`mmbatch.backends.library_versions`)."""
    checkpoint_settings: str | None = None
    """``module:function`` giving, from the model id and revision, settings read from the checkpoint that change
    predictions (an adapter it applies): part of the resume settings."""
    image_generator: bool = False
    """Whether it answers ``generate-image`` rows (its backend has ``generate_images``); ``infer`` refuses the
    others before loading a model when the input has such rows."""
