"""Write (or check) ``constraints.txt``: the exact version of every package that installing mmbatch brings.

``make install`` and both Docker targets install with ``-c constraints.txt``, so a rebuilt image or a fresh CI machine
gets the versions the suite passed with, and a rebuild cannot change a score. The file is the dependency closure of
``mmbatch[infer,dev]`` as installed here (read from the installed packages' own metadata, markers evaluated for this
platform), one ``name==version`` a line; local version labels (``+cpu``) are dropped, so the same pin serves the CPU
build here and the CUDA build in the ``full`` image.

    python tools/freeze_constraints.py           # rewrite constraints.txt from this environment (after an upgrade)
    python tools/freeze_constraints.py --check   # exit 1, naming the differences, when the file is out of date
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO_ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = REPO_ROOT / "constraints.txt"
ROOT = "mmbatch"
EXTRAS = ("infer", "dev")
HEADER = ("# Exact versions of every package mmbatch[infer,dev] brings, used by `make install` and the Dockerfile\n"
          "# (-c constraints.txt). Regenerate with `python tools/freeze_constraints.py` after an upgrade; the suite\n"
          "# checks that it matches the installed packages.\n")


def pinned_closure() -> dict[str, str]:
    """Canonical name -> public version of each installed distribution that ``mmbatch[infer,dev]`` needs."""
    pending = [Requirement(text) for text in importlib.metadata.requires(ROOT) or []
               if _wanted(Requirement(text), EXTRAS)]
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
        pending.extend(Requirement(text) for text in importlib.metadata.requires(requirement.name) or []
                       if _wanted(Requirement(text), ()))
    return dict(sorted(pins.items()))


def _wanted(requirement: Requirement, extras: tuple[str, ...]) -> bool:
    """Whether ``requirement`` applies here: no marker, or its marker holds for this platform and these extras."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in ("", *extras))


def render(pins: dict[str, str]) -> str:
    """The constraints file's text."""
    return HEADER + "".join(f"{name}=={version}\n" for name, version in pins.items())


def main(argv: list[str] | None = None) -> int:
    """Rewrite the file, or with ``--check`` compare it with this environment."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 when they differ")
    args = parser.parse_args(argv)
    expected = render(pinned_closure())
    if not args.check:
        CONSTRAINTS.write_text(expected, encoding="utf-8")
        print(f"wrote {CONSTRAINTS.name}: {expected.count('==')} packages")
        return 0
    current = CONSTRAINTS.read_text(encoding="utf-8") if CONSTRAINTS.is_file() else ""
    if current == expected:
        return 0
    have = set(current.splitlines()) - set(HEADER.splitlines())
    want = set(expected.splitlines()) - set(HEADER.splitlines())
    print(f"{CONSTRAINTS.name} is out of date: missing {sorted(want - have)}, stale {sorted(have - want)}; run "
          "`python tools/freeze_constraints.py`", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
