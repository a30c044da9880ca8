"""MMMU: college-level questions over one to seven images in 30 subjects of six disciplines; most are multiple
choice, some open (a number, a word, a formula). VLMEvalKit's MMMU_DEV_VAL holds the dev (150) and validation (900)
splits, MMMU_TEST the test split (10,500), whose answers the authors published in February 2026.

VLMEvalKit's TSV is read by :mod:`.read`; the prompt is VLMEvalKit's default multiple-choice prompt (an open question
has no options, so no option block), and the images go where the question's ``<image k>`` placeholders are, as
VLMEvalKit places them. :mod:`.answers` reads multiple-choice rows as VLMEvalKit does and open rows by the MMMU
authors' rule (``--kind-option rule=vlmevalkit`` re-scores them as VLMEvalKit does); :mod:`.score` tables accuracy
overall, per subject, per discipline and per question type, in each split.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

MMMU = Benchmark(
    name="mmmu",
    aliases=(),
    version="1.0",
    summary="MMMU (VLMEvalKit TSV MMMU_DEV_VAL/MMMU_TEST: multiple-choice and open questions, images at their "
            "<image k> placeholders; per subject and discipline)",
    reader="mmbatch.benchmarks.mmmu.read:READER",
    scorer="mmbatch.benchmarks.mmmu.score:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.benchmarks.mmmu.answers:ANSWERS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"),
                              ("question_type", "open", "acc", "Open")),
                    ability=("discipline", "acc"), detail=("subject", "acc")),
    export_formats=("mmmu-submission",),
    vlmevalkit_names=("mmmu_dev_val", "mmmu_test"),
    source_ids=None,
    sources=vlmevalkit_sources(("dev-val", "MMMU_DEV_VAL"), ("test", "MMMU_TEST")),
)
"""MMMU as VLMEvalKit prompts it, open questions scored by the authors' rule."""
