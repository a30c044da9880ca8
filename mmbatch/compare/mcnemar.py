"""McNemar's exact test: are two models' discordant verdicts on the same units balanced?

Only the discordant units matter: ``a_only`` (model A right, B wrong) and ``b_only``. Under the null hypothesis each
discordant unit is A's or B's with probability 1/2, so ``a_only ~ Binomial(a_only + b_only, 1/2)``; the two-sided
p-value doubles the smaller tail (capped at 1), the usual exact form (no continuity correction needed).
"""

from __future__ import annotations

import math


def mcnemar_exact_p(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value for ``a_only`` and ``b_only`` discordant units.

    Computed in log space so that hundreds of thousands of discordant units neither overflow nor lose the tail.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError("discordant counts cannot be negative")
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    log_half_n = n * math.log(0.5)
    log_terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half_n for i in range(k + 1)]
    top = max(log_terms)
    tail = math.exp(top) * sum(math.exp(t - top) for t in log_terms)
    return min(1.0, 2.0 * tail)
