"""GQA: compositional questions about real pictures, in VLMEvalKit's GQA_TestDev_Balanced (12,578 questions).

Read by the VLMEvalKit VQA table reader; right when the stripped answer equals the one reference ignoring case
(:mod:`mmbatch.answers.exact_match`); accuracy as VLMEvalKit's ``_acc.csv``.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

GQA = Benchmark(
    name="gqa",
    aliases=("gqa_testdev_balanced",),
    version="1.0",
    summary="GQA (VLMEvalKit TSV GQA_TestDev_Balanced: compositional questions, one exact answer each)",
    reader="mmbatch.benchmarks.gqa.read:READER",
    scorer="mmbatch.benchmarks.textvqa.score:SCORER",
    default_template="vlmevalkit-vqa",
    default_mode="generate",
    answers="mmbatch.answers.exact_match:SINGLE_EXACT_MATCH",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Accuracy"),)),
    export_formats=(),
    vlmevalkit_names=("gqa_testdev_balanced",),
    source_ids=None,
    sources=vlmevalkit_sources(("testdev-balanced", "GQA_TestDev_Balanced")),
)
"""GQA TestDev balanced as VLMEvalKit runs it: its short-answer prompt, exact match."""
