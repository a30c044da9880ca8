"""Loading the backend a run names, importing its module only then (torch, openai, vllm...): shared by the local
executor, the Ray executor's actors and a plan's model sessions."""

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
