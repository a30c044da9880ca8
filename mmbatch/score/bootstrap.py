"""The stratified group bootstrap, drawn on unit types instead of units.

Resampling the ``n_s`` units of a stratum with replacement and counting how often each unit TYPE was drawn is the
same as drawing the type counts from ``Multinomial(n_s, type_count / n_s)``. So a replicate costs one multinomial
draw per stratum over a few hundred types, however many units (circular groups, MME images, SEED rows) there are,
and 1,000 replicates of a million-row file take milliseconds. Strata are the finest category the benchmark has
(MMBench category, MME subtask, SEED dimension), so every replicate keeps the benchmark's composition.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a replicate is drawn: ``score`` without --bootstrap never loads numpy
    import numpy as np

MAX_REPLICATES = 100_000
"""Most bootstrap replicates (``--bootstrap``): the intervals are stable to 0.1 points long before; 100,000,000 held
4 GB of replicate values."""
CONFIDENCE = 0.95
"""Coverage of the reported percentile interval."""



def check_replicates(replicates: int) -> None:
    """Refuse a ``--bootstrap`` below 0 or over :data:`MAX_REPLICATES`.

    Raises:
        BadInputError: naming the limit.
    """
    from mmbatch.errors import BadInputError

    if replicates < 0:
        raise BadInputError(f"--bootstrap must be 0 or more, not {replicates}")
    if replicates > MAX_REPLICATES:
        raise BadInputError(f"--bootstrap {replicates:,} is over the limit of {MAX_REPLICATES:,} replicates "
                            "(MAX_REPLICATES); 1,000 to 10,000 give stable 95 % intervals")

def partition_rng(seed: int, key: Sequence[object]) -> np.random.Generator:
    """A generator for one (benchmark, model, split) partition, independent of the other partitions in the file.

    The key's text is hashed (not Python's salted ``hash``) so the same file and seed give the same intervals in
    every run, and adding a benchmark to a file does not move the intervals of the others.
    """
    import numpy as np

    digest = hashlib.sha256("\x1f".join(str(part) for part in key).encode("utf-8")).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def resample_type_counts(counts: np.ndarray, strata: np.ndarray, replicates: int,
                         rng: np.random.Generator) -> np.ndarray:
    """Type counts of ``replicates`` bootstrap samples, resampling units within each stratum.

    Args:
        counts: units per type, shape ``(T,)``.
        strata: stratum id of each type, shape ``(T,)``.
        replicates: number of bootstrap samples ``B``.
        rng: the partition's generator.

    Returns:
        Array of shape ``(B, T)``: how many units of each type each replicate drew.
    """
    import numpy as np

    weights = np.zeros((replicates, counts.shape[0]), dtype=np.float64)
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        total = int(counts[members].sum())
        if total == 0:
            continue
        probabilities = counts[members] / total
        weights[:, members] = rng.multinomial(total, probabilities, size=replicates)
    return weights


def percentile_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper percentile bounds of each column of ``values`` (``(B, M)``), ignoring NaN replicates.

    A column whose replicates are all NaN (a metric undefined in every replicate) gets NaN bounds.
    """
    import numpy as np

    tail = 100.0 * (1.0 - confidence) / 2.0
    low = np.full(values.shape[1], np.nan)
    high = np.full(values.shape[1], np.nan)
    defined = ~np.all(np.isnan(values), axis=0)
    if defined.any():
        bounds = np.nanpercentile(values[:, defined], [tail, 100.0 - tail], axis=0)
        low[defined], high[defined] = bounds[0], bounds[1]
    return low, high
