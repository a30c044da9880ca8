"""SEED-Bench-1 and SEED-Bench-2 (and SEED-Bench-2-Plus): four-choice questions on images and videos.

Modules: :mod:`.questions` (the official JSON: records, dimension names, choices, answers), :mod:`.media_files`
(``data_id`` -> files under ``--media-root``, checked), :mod:`.rows` (typed prepared frames), :mod:`.read`
(SEED-Bench-1 ``READER``) and :mod:`.read2` (SEED-Bench-2 ``READER``).
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView

_VIEW = ReportView(
    headline=(("overall", "Overall", "acc", "Overall"), ("data_type", None, "acc", "{group}"),
              ("level", None, "acc", "{group}"), ("overall", "Overall", "acc_macro", "Mean of dimensions")),
    ability=("dimension", "acc"),
)

SEEDBENCH = Benchmark(
    name="seedbench",
    aliases=(),
    version="1.0",
    summary="SEED-Bench-1 (the official JSON, images and videos under --media-root)",
    reader="mmbatch.benchmarks.seedbench.read:READER",
    scorer="mmbatch.benchmarks.seedbench.score:SCORER",
    default_template="seed-likelihood",
    default_mode="likelihood",
    answers="mmbatch.answers.choice:CHOICE",
    circular=False,
    group_rule="row",
    view=_VIEW,
    export_formats=("seed-upload",),
    vlmevalkit_names=("seedbench_img",),
    source_ids=None,
)
"""SEED-Bench-1: accuracy per dimension, data type and overall (docs/rules.md §7)."""

SEEDBENCH2 = Benchmark(
    name="seedbench2",
    aliases=(),
    version="2.0",
    summary="SEED-Bench-2 and -2-Plus (the official JSON)",
    reader="mmbatch.benchmarks.seedbench.read2:READER",
    scorer="mmbatch.benchmarks.seedbench.score:SCORER_V2",
    default_template="seed-likelihood",
    default_mode="likelihood",
    answers="mmbatch.answers.choice:CHOICE",
    circular=False,
    group_rule="row",
    view=_VIEW,
    export_formats=("seed-upload",),
    vlmevalkit_names=("seedbench2", "seedbench2_plus"),
    source_ids=None,
)
"""SEED-Bench-2: SEED-Bench-1's metrics plus levels L1-L3 and parts (docs/rules.md §7)."""
