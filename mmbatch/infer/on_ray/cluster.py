"""Joining the Ray cluster an ``infer --executor ray`` run uses, and sizing its actors against it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from mmbatch.infer.on_ray.options import RayOptions, import_ray

LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray reads this when imported: "0" makes a cluster it starts use 127.0.0.1 for every address it listens on (as it
does on macOS), so the one-machine cluster of a run without an address is not reachable from the network."""


@contextmanager
def joined(options: RayOptions) -> Iterator[ModuleType]:
    """``ray``, connected to the cluster of ``options`` for the duration of the block.

    A caller that already called ``ray.init`` (the Python API, a notebook) keeps its connection, and it stays open
    afterwards. Otherwise the run joins ``--ray-address`` (or ``RAY_ADDRESS``), or starts a one-machine cluster that
    listens on 127.0.0.1 only, and leaves (stopping that cluster) at the end.

    Raises:
        BadInputError: Ray is not installed (the install command is in the message).
    """
    address = options.address or os.environ.get("RAY_ADDRESS") or None
    if address is None and "ray" not in sys.modules:
        os.environ.setdefault(LOOPBACK_ONLY, "0")
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    ray.init(address=address, include_dashboard=False if address is None else None, log_to_driver=True,
             configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def actor_gpus(ray: ModuleType, options: RayOptions, tensor_parallel_size: int) -> float:
    """GPUs each backend actor holds: ``--ray-gpus-per-actor``, else the backend's tensor-parallel size (1 when it
    has none) on a cluster with GPUs, and 0 on one without."""
    if options.gpus_per_actor is not None:
        return options.gpus_per_actor
    return float(max(tensor_parallel_size, 1)) if ray.cluster_resources().get("GPU", 0) > 0 else 0.0


def shortfall(ray: ModuleType, options: RayOptions, gpus: float) -> str | None:
    """What the cluster lacks now for the whole actor pool and one decoding task, or None.

    Only a warning: an autoscaling cluster (KubeRay) adds nodes when the actors ask for them.
    """
    have: dict[str, Any] = ray.cluster_resources()
    need = {"CPU": options.actors * options.cpus_per_actor + options.decode_cpus, "GPU": options.actors * gpus}
    lacking = [f"{amount:g} {name} (it has {float(have.get(name, 0)):g})" for name, amount in need.items()
               if amount > float(have.get(name, 0))]
    return f"the pool of {options.actors} actors asks for {' and '.join(lacking)}" if lacking else None

