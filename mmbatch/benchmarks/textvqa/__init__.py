"""TextVQA: questions about the text in everyday pictures, each with ten human answers (VLMEvalKit's TextVQA_VAL).

:mod:`.read` reads VLMEvalKit's VQA table (:mod:`mmbatch.formats.vlmevalkit_vqa`),
:mod:`mmbatch.answers.vqa_accuracy` scores a prediction against the ten answers with the VQA metric, and
:mod:`.score` averages the scores as VLMEvalKit's ``_acc.csv`` does (its scorer is shared by the other open-answer
VQA benchmarks: OCRVQA, GQA, DocVQA, InfoVQA, ChartQA).
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

TEXTVQA = Benchmark(
    name="textvqa",
    aliases=("textvqa_val",),
    version="1.0",
    summary="TextVQA (VLMEvalKit TSV TextVQA_VAL: ten human answers per question, VQA accuracy)",
    reader="mmbatch.benchmarks.textvqa.read:READER",
    scorer="mmbatch.benchmarks.textvqa.score:SCORER",
    default_template="vlmevalkit-vqa",
    default_mode="generate",
    answers="mmbatch.answers.vqa_accuracy:VQA_ACCURACY",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "VQA accuracy"),)),
    export_formats=(),
    vlmevalkit_names=("textvqa_val",),
    source_ids=None,
    sources=vlmevalkit_sources(("val", "TextVQA_VAL")),
)
"""TextVQA_VAL as VLMEvalKit runs it: its short-answer prompt, the VQA metric over the ten human answers."""
