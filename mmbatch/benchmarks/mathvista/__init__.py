"""MathVista (testmini, VLMEvalKit's ``MathVista_MINI.tsv``): 1,000 math questions over images, free-form numbers
and texts or options, scored as VLMEvalKit scores them: its prefetch rules, its judge extraction, its ``post_check``
comparison (:mod:`.rules`, :mod:`.prompt`, :mod:`.answers`) and its Task&Skill table (:mod:`.score`)."""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

MATHVISTA = Benchmark(
    name="mathvista",
    aliases=("mathvista_mini",),
    version="1.0",
    summary="MathVista testmini (VLMEvalKit TSV: question with its hint and choices, question_type, answer_type, "
    "skills, task); judge-extracted answers",
    reader="mmbatch.benchmarks.mathvista.read:READER",
    scorer="mmbatch.benchmarks.mathvista.score:SCORER",
    default_template="mme",
    default_mode="generate",
    answers="mmbatch.benchmarks.mathvista.answers:ANSWERS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"),
                              ("overall", "Overall", "prefetch_rate", "prefetch %")),
                    ability=("task&skill", "acc")),
    export_formats=(),
    vlmevalkit_names=("mathvista_mini",),
    source_ids=None,
    sources=vlmevalkit_sources(("testmini", "MathVista_MINI")),
)
"""MathVista as VLMEvalKit runs it: the question as the TSV writes it (template ``mme``), prefetch then the judge's
extraction, ``post_check``, the Task&Skill table."""
