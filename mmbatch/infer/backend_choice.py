"""The backend an ``infer`` run names, created from its options: its module imported only now (torch, openai...).

The local executor, every Ray actor (:mod:`mmbatch.infer.on_ray.work`) and a plan's shared model
(:mod:`mmbatch.plans.session`) create their backend here, so the stage and its executors import this module rather
than each other.
"""

from __future__ import annotations

import importlib

from mmbatch.backends.base import Backend
from mmbatch.backends.registry import get_backend_declaration
from mmbatch.infer.settings import InferOptions
from mmbatch.optional_packages import missing_package


def create_backend(options: InferOptions) -> Backend:
    """The backend named by ``options.backend``, imported only now (torch, openai...).

    Raises:
        BadInputError: bad options, or a package the backend needs is not installed (the install command is in the
            message: the light image has no torch).
    """
    declaration = get_backend_declaration(options.backend)
    try:
        backend: Backend = importlib.import_module(declaration.module).create_backend(options.backend_options())
    except ModuleNotFoundError as exc:
        refusal = missing_package(exc, f"--backend {options.backend}")
        if refusal is None:
            raise
        raise refusal from exc
    return backend
