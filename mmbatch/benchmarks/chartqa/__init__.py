"""ChartQA: questions about charts, in VLMEvalKit's ChartQA_TEST (its ``split``: test_human and test_augmented).

Read by the VLMEvalKit VQA table reader, which moves VLMEvalKit's ``split`` to ``category`` (the two halves of one
test set are scored together, as VLMEvalKit's ``_acc.csv`` shows them with their Overall); a number is right within
5 %, anything else exactly ignoring case (:mod:`mmbatch.answers.relaxed_accuracy`, with VLMEvalKit's eras and the
paper's rule); accuracy per half and over both.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

CHARTQA = Benchmark(
    name="chartqa",
    aliases=("chartqa_test",),
    version="1.0",
    summary="ChartQA (VLMEvalKit TSV ChartQA_TEST: test_human/test_augmented, relaxed accuracy)",
    reader="mmbatch.benchmarks.chartqa.read:READER",
    scorer="mmbatch.benchmarks.textvqa.score:SCORER",
    default_template="vlmevalkit-vqa",
    default_mode="generate",
    answers="mmbatch.answers.relaxed_accuracy:RELAXED_ACCURACY",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"), ("category", None, "acc", "{group}"))),
    export_formats=(),
    vlmevalkit_names=("chartqa_test",),
    source_ids=None,
    sources=vlmevalkit_sources(("test", "ChartQA_TEST")),
)
"""ChartQA_TEST as VLMEvalKit runs it: its short-answer prompt, relaxed accuracy per split and overall."""
