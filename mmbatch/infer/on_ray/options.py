"""The ``--executor ray`` options, and the import of Ray (an optional extra) with its install command.

Nothing here imports Ray at module level: ``mmbatch infer`` without ``--executor ray`` never loads it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from mmbatch.errors import BadInputError

EXECUTORS = ("local", "ray")
"""``--executor`` choices: this process (default), or an actor pool on a Ray cluster."""
INSTALL = "pip install 'mmbatch[ray]'"
"""What to run when Ray is missing."""


@dataclass(frozen=True)
class RayOptions:
    """How ``infer --executor ray`` uses the cluster; none of it changes a prediction (not in the resume settings)."""

    address: str | None = None
    """``--ray-address``: the cluster to join (``HOST:PORT``, ``auto``, ``ray://...``); None joins ``RAY_ADDRESS``
    when set, else starts a one-machine cluster for this run alone."""
    actors: int = 1
    """``--ray-actors``: backend actors in the pool, each loading the model once."""
    gpus_per_actor: float | None = None
    """``--ray-gpus-per-actor``: GPUs each actor holds; None: the backend's ``tensor_parallel_size`` (1 for others)
    when the cluster has GPUs, else 0."""
    cpus_per_actor: float = 1.0
    """``--ray-cpus-per-actor``: CPUs each actor holds (the model's host-side work: tokenising, processing)."""
    decode_cpus: float = 1.0
    """``--ray-decode-cpus``: CPUs each decoding task holds (images and video frames of one chunk)."""

    def __post_init__(self) -> None:
        if self.actors < 1:
            raise BadInputError(f"--ray-actors {self.actors}: at least 1")
        for name, value in (("--ray-gpus-per-actor", self.gpus_per_actor), ("--ray-cpus-per-actor",
                            self.cpus_per_actor), ("--ray-decode-cpus", self.decode_cpus)):
            if value is not None and not value >= 0:
                raise BadInputError(f"{name} {value}: a number of at least 0")

    def recorded(self) -> dict[str, object]:
        """What the predictions file's metadata records about the executor (the address without credentials)."""
        from mmbatch.server_urls import without_credentials

        return {"name": "ray", "address": None if self.address is None else without_credentials(self.address),
                "actors": self.actors, "gpus_per_actor": self.gpus_per_actor, "cpus_per_actor": self.cpus_per_actor,
                "decode_cpus": self.decode_cpus}


def import_ray() -> ModuleType:
    """``ray`` with Ray Data, imported now.

    Raises:
        BadInputError: Ray (or Ray Data's own dependencies) is not installed; the message gives the install command.
    """
    try:
        ray = importlib.import_module("ray")
        importlib.import_module("ray.data")
    except ImportError as exc:
        raise BadInputError(f"--executor ray needs Ray with Ray Data ({exc.name or 'ray'} is missing): {INSTALL}") \
            from exc
    return ray
