"""Build the tiny random-weight models of the SEED-Bench-2 level-3 demo (offline, cached under ``.cache/``).

Usage: ``python examples/tiny_image_models.py clip|diffusion``; prints the model folder, passed on as
``mmbatch extract --clip-model DIR`` or ``mmbatch infer --backend diffusers --model DIR``. Random weights: they show
the pipeline working, not a score (the echo backend's right pictures score 100 % through any CLIP). For real models
see docs/seedbench2-image-generation.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Build the model named on the command line unless it is cached, and print its folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=["clip", "diffusion"])
    args = parser.parse_args()
    # The builders live with the tests, which load the same models; the repository root makes them importable.
    sys.path.insert(0, str(REPO_ROOT))
    if args.model == "clip":
        from tests.support.tiny_clip import tiny_clip

        print(tiny_clip())
    else:
        from tests.support.tiny_diffusion import tiny_stable_diffusion

        print(tiny_stable_diffusion())


if __name__ == "__main__":
    main()
