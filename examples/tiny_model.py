"""Build the tiny random-weight LLaVA used by ``make demo`` (offline, a few seconds, cached).

Usage: ``python examples/tiny_model.py [DIR]`` (default ``.cache/tiny-llava``); prints the model directory, which is
then passed to ``mmbatch infer --backend hf --model DIR``. Its answers are random text: it shows the pipeline working,
not a score. For a real model pass a Hugging Face id instead (see docs/models.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Parse the arguments, build the model if it is not cached yet and print its directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", type=Path, default=REPO_ROOT / ".cache" / "tiny-llava")
    parser.add_argument("--architecture", choices=["llava", "idefics3"], default="llava")
    args = parser.parse_args()
    # The builder lives with the tests, which build the same models; the repository root makes it importable.
    sys.path.insert(0, str(REPO_ROOT))
    from tests.support.tiny_models import build_cached

    print(build_cached(args.architecture, args.directory.resolve()))


if __name__ == "__main__":
    main()
