"""The stage files of one evaluation kept in one folder, each named after the stage that writes it.

``mmbatch run`` (its ``--output-dir``, :class:`mmbatch.pipeline.RunFiles`) and each (model, benchmark) pair of a plan
(:class:`mmbatch.plans.layout.PairFiles`) lay their files out alike, so any stage can be run again alone on either
folder with the same names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StageFiles:
    """``predictions.parquet``, ``extracted.parquet`` and ``metrics.json`` in :attr:`folder`."""

    folder: Path
    """The folder that holds the files."""

    @property
    def predictions(self) -> Path:
        """``infer``'s output, ``extract``'s input."""
        return self.folder / "predictions.parquet"

    @property
    def extracted(self) -> Path:
        """``extract``'s output, ``score``'s input."""
        return self.folder / "extracted.parquet"

    @property
    def metrics(self) -> Path:
        """``score``'s metrics table; the per-row hits go beside it (``metrics.hits.parquet``)."""
        return self.folder / "metrics.json"
