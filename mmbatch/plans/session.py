"""One model loaded once for all its benchmarks.

``infer`` asks its backend source for a backend only when some row is left to run; a :class:`ModelSession` creates
the backend on the first such request and hands the same object to every later benchmark of the model, so a model
whose benchmarks are all finished is never loaded, and one with work left is loaded exactly once per process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mmbatch.errors import BadInputError
from mmbatch.plans.spec import ModelEntry

if TYPE_CHECKING:
    from mmbatch.backends.base import Backend, BackendOptions
    from mmbatch.infer.settings import InferOptions


class ModelSession:
    """The backend of one plan model, created on first need and closed by :meth:`close`."""

    def __init__(self, model: ModelEntry) -> None:
        self.model = model
        """The plan's model."""
        self.loads = 0
        """How many times the backend was created (0 or 1)."""
        self._backend: Backend | None = None
        self._options: BackendOptions | None = None
        self._refused: BadInputError | None = None

    def backend(self, options: InferOptions) -> Backend:
        """The model's backend, created now on the first call.

        Raises:
            BadInputError: the model cannot be loaded (raised again for its later benchmarks without trying again:
                a model that failed to load once, e.g. after minutes of retries, fails the same way).
            RuntimeError: ``options`` would build another backend than the loaded one (a benchmark's options
                reached the backend's; the plan never does that, so it is a bug, not a user error).
        """
        from mmbatch.infer.backend_choice import create_backend

        if self._refused is not None:
            raise BadInputError(f"the model could not be loaded for an earlier benchmark: {self._refused.reason}",
                                path=self._refused.path)
        wanted = options.backend_options()
        if self._backend is None:
            try:
                self._backend = create_backend(options)
            except BadInputError as exc:
                self._refused = exc
                raise
            self._options = wanted
            self.loads += 1
        elif wanted != self._options:
            raise RuntimeError(f"{self.model.key}: a benchmark asked for other backend options than the loaded "
                               f"model's ({wanted} != {self._options})")
        return self._backend

    def close(self) -> None:
        """Close the backend (frees the GPU), if it was created."""
        if self._backend is not None:
            backend, self._backend = self._backend, None
            backend.close()
