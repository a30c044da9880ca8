"""Regenerate every bundled example: runs each ``examples/generate/<name>.py`` that is a script.

A generator is a file in ``examples/generate/`` with a ``__main__`` block that takes the output folder as its only
argument and writes ``OUT/<name>/``; helper modules (``drawing.py``) have no such block and are skipped. Every
generator is deterministic, so rerunning this leaves ``git status`` clean.

Usage: ``python examples/make_examples.py [OUT_DIR]`` (default: ``examples/``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def generators() -> list[Path]:
    """The generator scripts, in name order."""
    return [path for path in sorted((HERE / "generate").glob("*.py"))
            if not path.name.startswith("_") and '__name__ == "__main__"' in path.read_text(encoding="utf-8")]


def main(out: Path) -> int:
    """Run every generator into ``out``; stop at the first failure with its exit status."""
    for script in generators():
        print(f"== {script.relative_to(HERE.parent)}", flush=True)
        status = subprocess.run([sys.executable, str(script), str(out)], check=False).returncode
        if status != 0:
            print(f"{script.name} failed with exit status {status}", file=sys.stderr)
            return status
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE))
