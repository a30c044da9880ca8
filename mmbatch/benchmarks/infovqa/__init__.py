"""InfographicVQA: questions about infographics, in VLMEvalKit's InfoVQA_VAL (InfoVQA_TEST has no public answers).

Read by the VLMEvalKit VQA table reader; scored by ANLS with threshold 0.5 (:mod:`mmbatch.answers.anls`, the
Robust Reading Competition's rule, which VLMEvalKit copied); mean ANLS in percent as VLMEvalKit's ``_acc.csv``.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

INFOVQA = Benchmark(
    name="infovqa",
    aliases=("infovqa_val",),
    version="1.0",
    summary="InfoVQA (VLMEvalKit TSV InfoVQA_VAL: questions on infographics, ANLS)",
    reader="mmbatch.benchmarks.infovqa.read:READER",
    scorer="mmbatch.benchmarks.textvqa.score:ANLS_SCORER",
    default_template="vlmevalkit-vqa",
    default_mode="generate",
    answers="mmbatch.answers.anls:ANLS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "anls", "ANLS"),)),
    export_formats=(),
    vlmevalkit_names=("infovqa_val", "infovqa_test"),
    source_ids=None,
    sources=vlmevalkit_sources(("val", "InfoVQA_VAL"), ("test", "InfoVQA_TEST")),
)
"""InfoVQA_VAL as VLMEvalKit runs it: its short-answer prompt, ANLS."""
