"""BLINK: multiple-choice visual perception questions (depth, correspondence, counting, jigsaw, ...), many over two to
four images, in 14 tasks (``category``); VLMEvalKit's ``BLINK`` holds the validation split, with answers.

VLMEvalKit's TSV is an MMBench-style file (several images of a row as a list in ``image``) read by the MMBench reader.
The prompt is VLMEvalKit's default multiple-choice prompt, images first; answers are matched by ``can_infer``, then by
the judge with the prompt VLMEvalKit keeps for BLINK (:mod:`.answers`); accuracy is tabled overall and per task as
``report_acc`` does.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

BLINK = Benchmark(
    name="blink",
    aliases=(),
    version="1.0",
    summary="BLINK (VLMEvalKit TSV: perception questions over one to four images, 14 tasks in 'category')",
    reader="mmbatch.benchmarks.blink.read:READER",
    scorer="mmbatch.benchmarks.category_accuracy:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.benchmarks.blink.answers:ANSWERS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"),),
                    ability=("category", "acc")),
    export_formats=(),
    vlmevalkit_names=("blink",),
    source_ids=None,
    sources=vlmevalkit_sources(("val", "BLINK")),
)
"""BLINK as VLMEvalKit runs it: its default MCQ prompt, ``can_infer`` then the judge with BLINK's prompt."""
