"""MMBench, CCBench and any MMBench-style multiple-choice file.

``read`` reads the VLMEvalKit files (the ``READER`` of ``--benchmark mmbench``/``ccbench``), ``checks`` holds the row
checks every MCQ file must pass, ``circular`` the CircularEval group keys and generated copies, ``images`` and
``image_header`` the cheap checks of base64 images, ``media_paths`` the checks of ``image_path`` files, ``score``
the CircularEval scoring.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView

_VIEW = ReportView(
    headline=(("overall", "Overall", "circular_acc", "Overall (circular)"),
              ("overall", "Overall", "vanilla_acc", "Overall (vanilla)")),
    ability=("l2-category", "circular_acc"),
    detail=("category", "circular_acc"),
)

MMBENCH = Benchmark(
    name="mmbench",
    aliases=(),
    version="1.0",
    summary="MMBench (VLMEvalKit TSV; also any MMBench-style MCQ file)",
    reader="mmbatch.benchmarks.mmbench.read:READER",
    scorer="mmbatch.benchmarks.mmbench.score:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.answers.choice:CHOICE",
    circular=True,
    group_rule="circular-offset",
    view=_VIEW,
    export_formats=("mmbench-submission",),
    vlmevalkit_names=("mmbench", "mmbench_dev_en", "mmbench_test_en", "mmbench_dev_cn", "mmbench_test_cn",
                      "mmbench_dev_en_v11", "mmbench_test_en_v11", "mmbench_dev_cn_v11", "mmbench_test_cn_v11",
                      "mmbench_v11", "mmbench_cn_v11"),
    source_ids=None,
)
"""MMBench: CircularEval over option shifts (docs/rules.md §1)."""

CCBENCH = Benchmark(
    name="ccbench",
    aliases=(),
    version="1.0",
    summary="CCBench (VLMEvalKit TSV, MMBench format)",
    reader="mmbatch.benchmarks.mmbench.read:READER",
    scorer="mmbatch.benchmarks.mmbench.score:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.answers.choice:CHOICE",
    circular=True,
    group_rule="circular-offset",
    view=_VIEW,
    export_formats=("mmbench-submission",),
    vlmevalkit_names=("ccbench",),
    source_ids=None,
)
"""CCBench: MMBench's Chinese-culture sibling, read and scored the same way."""
