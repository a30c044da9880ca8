"""MathVision (MATH-Vision, VLMEvalKit's ``MathVision.tsv``, 3,040 competition problems over images, and
``MathVision_MINI.tsv``, 304 of them): option and free-form questions, scored as VLMEvalKit scores them by default
(``evaluate_heuristic``): its prefetch, its judge extraction, its ``is_equal`` comparison (:mod:`.answers`,
:mod:`.equality`, reproduced without running the model's text: :mod:`.safe_eval`) and its per-subject table
(:mod:`.score`). VLMEvalKit's other route, ``--use-verifier`` (a local verifier model), is not reproduced."""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

MATHVISION = Benchmark(
    name="mathvision",
    aliases=("math-vision", "mathvision_mini"),
    version="1.0",
    summary="MathVision (VLMEvalKit TSV MathVision/MathVision_MINI: questions with 'choices' ([] when free-form), "
    "subjects in 'category'); judge-extracted answers compared by VLMEvalKit's is_equal (needs mmbatch[mathvision])",
    reader="mmbatch.benchmarks.mathvision.read:READER",
    scorer="mmbatch.benchmarks.mathvision.score:SCORER",
    default_template="mme",
    default_mode="generate",
    answers="mmbatch.benchmarks.mathvision.answers:ANSWERS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"),
                              ("overall", "Overall", "prefetch_rate", "prefetch %")),
                    ability=("subject", "acc")),
    export_formats=(),
    vlmevalkit_names=("mathvision", "mathvision_mini"),
    source_ids=None,
    sources=vlmevalkit_sources(("test", "MathVision"), ("testmini", "MathVision_MINI")),
)
"""MathVision as VLMEvalKit runs it: the question as the TSV writes it (template ``mme``, VLMEvalKit's default
prompt), prefetch then the judge's extraction, ``is_equal``, the per-subject table."""
