"""MM-Vet (VLMEvalKit's ``MMVet.tsv``, 218 open questions over six capabilities): each answer graded 0-1 by a judge
with the few-shot grader prompt (:mod:`.grader`, :mod:`.answers`), then averaged per capability and capability
integration (:mod:`.score`)."""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

MMVET = Benchmark(
    name="mmvet",
    aliases=("mm-vet",),
    version="1.0",
    summary="MM-Vet (VLMEvalKit TSV: open questions, answers with <AND>/<OR>, capabilities in 'category'); "
    "judge-graded",
    reader="mmbatch.benchmarks.mmvet.read:READER",
    scorer="mmbatch.benchmarks.mmvet.score:SCORER",
    default_template="mme",
    default_mode="generate",
    answers="mmbatch.benchmarks.mmvet.answers:ANSWERS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"), ("capability", None, "acc", "{group}")),
                    ability=("capability", "acc")),
    export_formats=(),
    vlmevalkit_names=("mmvet",),
    source_ids=None,
    sources=vlmevalkit_sources(("test", "MMVet")),
)
"""MM-Vet as VLMEvalKit runs it: the question as written (template ``mme``), the judge's 0-1 grade, the mean grade
per capability and capability integration."""
