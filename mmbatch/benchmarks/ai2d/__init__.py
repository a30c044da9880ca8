"""AI2D: multiple-choice questions about science diagrams (AI2D_TEST, 3,088 questions; AI2D_TEST_NO_MASK shows the
diagrams without VLMEvalKit's masked labels).

VLMEvalKit's TSV is an MMBench-style file, so the neutral VLMEvalKit reader reads it; answers are matched by
VLMEvalKit's ``can_infer`` then its MCQ judge, and :mod:`mmbatch.benchmarks.category_accuracy` tables accuracy as
``report_acc`` does.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

AI2D = Benchmark(
    name="ai2d",
    aliases=("ai2d_test",),
    version="1.0",
    summary="AI2D (VLMEvalKit TSV AI2D_TEST: diagram questions, MMBench format, one row per question)",
    reader="mmbatch.benchmarks.ai2d.read:READER",
    scorer="mmbatch.benchmarks.category_accuracy:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.answers.choice:CHOICE",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"),),
                    ability=("category", "acc")),
    export_formats=(),
    vlmevalkit_names=("ai2d_test", "ai2d_test_no_mask"),
    source_ids=None,
    sources=vlmevalkit_sources(("test", "AI2D_TEST"), ("test-no-mask", "AI2D_TEST_NO_MASK")),
)
"""AI2D as VLMEvalKit runs it: its default MCQ prompt, ``can_infer`` then the judge, plain accuracy."""
