"""MMStar: 1,500 four-option questions that need the image, in six core capabilities (``category``) and eighteen
axes (``l2-category``); each question is asked once (no circular copies).

VLMEvalKit's ``MMStar.tsv`` is a VLMEvalKit-format multiple-choice file, so :mod:`.read` is the neutral reader
(:mod:`mmbatch.formats.vlmevalkit_tsv`), its answers are matched by the choice kind's rules and judge, and
:mod:`.score` reports accuracy per category, per l2-category and overall.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

MMSTAR = Benchmark(
    name="mmstar",
    aliases=(),
    version="1.0",
    summary="MMStar (VLMEvalKit TSV, MMBench format without circular copies)",
    reader="mmbatch.benchmarks.mmstar.read:READER",
    scorer="mmbatch.benchmarks.mmstar.score:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.answers.choice:CHOICE",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"), ("category", None, "acc", "{group}")),
                    ability=("l2-category", "acc")),
    export_formats=(),
    vlmevalkit_names=("mmstar",),
    source_ids=None,
    sources=vlmevalkit_sources(("val", "MMStar")),
)
"""MMStar as VLMEvalKit runs it: its MCQ prompt, ``can_infer`` then the judge, plain accuracy."""
