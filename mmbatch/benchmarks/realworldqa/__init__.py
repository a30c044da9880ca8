"""RealWorldQA: 765 multiple-choice questions about real-world (mostly driving) photos, without categories.

VLMEvalKit's TSV is an MMBench-style file read by the neutral VLMEvalKit reader. Two quirks of that table are kept, as
VLMEvalKit keeps them: question 731 answers ``Uphill`` (option A's text, not its letter) and two questions answer ``D``
where option D is empty; none of the three can be right, and ``import`` and ``prepare`` say how many there are.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

REALWORLDQA = Benchmark(
    name="realworldqa",
    aliases=(),
    version="1.0",
    summary="RealWorldQA (VLMEvalKit TSV: real-world photos, MMBench format, one row per question)",
    reader="mmbatch.benchmarks.realworldqa.read:READER",
    scorer="mmbatch.benchmarks.category_accuracy:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.answers.choice:CHOICE",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"),)),
    export_formats=(),
    vlmevalkit_names=("realworldqa",),
    source_ids=None,
    sources=vlmevalkit_sources(("test", "RealWorldQA")),
)
"""RealWorldQA as VLMEvalKit runs it: its default MCQ prompt, ``can_infer`` then the judge, plain accuracy."""
