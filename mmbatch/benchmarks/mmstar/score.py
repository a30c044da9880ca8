"""MMStar scoring as VLMEvalKit's ``report_acc`` gives it: accuracy overall, per ``category`` and per
``l2-category``. Each row is a unit (no circular groups); the bootstrap resamples rows within their category. The
plain multiple-choice scorer (:mod:`mmbatch.benchmarks.category_accuracy`) with MMStar's order of the levels.
"""

from __future__ import annotations

from mmbatch.benchmarks.category_accuracy import CategoryAccuracyScorer

SCORER = CategoryAccuracyScorer(levels=("category", "l2-category"))
"""The scorer of ``mmstar``: its categories, then its l2-categories."""
