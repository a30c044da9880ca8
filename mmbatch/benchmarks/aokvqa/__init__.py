"""A-OKVQA's multiple-choice questions (commonsense and world knowledge about COCO images), as VLMEvalKit's ``A-OKVQA``
dataset holds them: an MMBench-style TSV, read by the neutral VLMEvalKit reader.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

AOKVQA = Benchmark(
    name="aokvqa",
    aliases=("a-okvqa",),
    version="1.0",
    summary="A-OKVQA multiple choice (VLMEvalKit TSV A-OKVQA, MMBench format, one row per question)",
    reader="mmbatch.benchmarks.aokvqa.read:READER",
    scorer="mmbatch.benchmarks.category_accuracy:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.answers.choice:CHOICE",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"),)),
    export_formats=(),
    vlmevalkit_names=("a-okvqa",),
    source_ids=None,
    sources=vlmevalkit_sources(("val", "A-OKVQA")),
)
"""A-OKVQA as VLMEvalKit runs it: its default MCQ prompt, ``can_infer`` then the judge, plain accuracy."""
