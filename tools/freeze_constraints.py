"""Write (or check) ``constraints.txt``: the exact version of every package that installing mmbatch brings.

``make install`` and both Docker targets install with ``-c constraints.txt``, so a rebuilt image or a fresh CI machine
gets the versions the suite passed with, and a rebuild cannot change a score. The file is the dependency closure of
``mmbatch[infer,dev,ray]`` as installed here (read from the installed packages' own metadata, markers evaluated for this
platform), one ``name==version`` a line; local version labels (``+cpu``) are dropped, so the same pin serves the CPU
build here and the CUDA build in the ``full`` image.

    python tools/freeze_constraints.py           # rewrite constraints.txt from this environment (after an upgrade)
    python tools/freeze_constraints.py --check   # exit 1 when a package mmbatch needs has no pin

The ``mlflow`` and ``wandb`` extras live in their own virtualenv (``make tracking-env``); when it exists, their
closure is read there (by this script, run with that environment's Python) and pinned too, its versions winning
(MLflow's client needs importlib-metadata below 10), so that ``-c constraints.txt`` installs every extra together.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO_ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = REPO_ROOT / "constraints.txt"
ROOT = "mmbatch"
EXTRAS = ("infer", "dev", "ray")
OWN_ENVIRONMENTS = {("mlflow", "wandb"): REPO_ROOT / ".cache" / "tracking-venv" / "bin" / "python"}
"""Extras installed in a virtualenv of their own -> that environment's Python."""
HEADER = ("# Exact versions of every package mmbatch[infer,dev,ray] brings, used by `make install` and the Dockerfile\n"
          "# (-c constraints.txt). Regenerate with `python tools/freeze_constraints.py` after an upgrade; the suite\n"
          "# checks that it matches the installed packages.\n")


def declared_requirements(extras: tuple[str, ...] = EXTRAS) -> list[Requirement]:
    """mmbatch's own requirements and those of ``extras``, from ``pyproject.toml`` (the installed package's
    metadata may predate the latest edit of the file)."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = [*project.get("dependencies", [])]
    for extra in extras:
        texts += project.get("optional-dependencies", {}).get(extra, [])
    return [Requirement(text) for text in texts if _wanted(Requirement(text), extras)]


def own_environment_pins() -> dict[str, str]:
    """The closure of each extra kept in its own virtualenv, read by this script in that environment (when built)."""
    import json
    import subprocess

    pins: dict[str, str] = {}
    for extras, python in OWN_ENVIRONMENTS.items():
        if python.is_file():
            done = subprocess.run([str(python), __file__, "--closure", ",".join(extras)], capture_output=True,
                                  text=True, check=True, cwd=REPO_ROOT)
            pins |= json.loads(done.stdout)
    return pins


def pinned_closure(extras: tuple[str, ...] = EXTRAS) -> dict[str, str]:
    """Canonical name -> public version of each installed distribution that ``mmbatch[extras]`` needs."""
    pending = declared_requirements(extras)
    pins: dict[str, str] = {}
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in pins or name == ROOT:
            continue
        try:
            installed = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            raise SystemExit(f"{requirement.name} is required but not installed here: `make install` first") from None
        pins[name] = Version(installed).public
        # A requirement's own extras (``ray[data]``) bring their packages too.
        pending.extend(Requirement(text) for text in importlib.metadata.requires(requirement.name) or []
                       if _wanted(Requirement(text), tuple(requirement.extras)))
    return dict(sorted(pins.items()))


def _wanted(requirement: Requirement, extras: tuple[str, ...]) -> bool:
    """Whether ``requirement`` applies here: no marker, or its marker holds for this platform and these extras."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in ("", *extras))


def render(pins: dict[str, str]) -> str:
    """The constraints file's text."""
    return HEADER + "".join(f"{name}=={version}\n" for name, version in pins.items())


def read_pins(text: str) -> dict[str, str]:
    """``name -> version`` of a constraints file's text."""
    pins = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def main(argv: list[str] | None = None) -> int:
    """Rewrite the file, or with ``--check`` compare it with this environment."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a package mmbatch needs has no pin; other differences are printed")
    parser.add_argument("--closure", metavar="EXTRA,...",
                        help="print the closure of these extras in this environment as JSON (for OWN_ENVIRONMENTS)")
    args = parser.parse_args(argv)
    if args.closure:
        import json

        print(json.dumps(pinned_closure(tuple(args.closure.split(",")))))
        return 0
    installed = dict(sorted((pinned_closure() | own_environment_pins()).items()))
    if not args.check:
        CONSTRAINTS.write_text(render(installed), encoding="utf-8")
        print(f"wrote {CONSTRAINTS.name}: {len(installed)} packages")
        return 0
    pinned = read_pins(CONSTRAINTS.read_text(encoding="utf-8")) if CONSTRAINTS.is_file() else {}
    # A package without a pin is a defect of the file (a rebuild may pick any version); a pin that differs from
    # what this machine has installed is not (`make install` on a fresh machine installs the pin), so it is shown.
    unpinned = sorted(set(installed) - set(pinned))
    differing = [f"{name} {pinned[name]} pinned, {installed[name]} here" for name in installed
                 if name in pinned and pinned[name] != installed[name]]
    unused = sorted(set(pinned) - set(installed))
    for what, names in (("installed at another version", differing), ("pinned but not needed", unused)):
        if names:
            print(f"note: {what}: {', '.join(names)}", file=sys.stderr)
    if unpinned:
        print(f"{CONSTRAINTS.name} has no pin for {', '.join(unpinned)}: run `python tools/freeze_constraints.py`",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
