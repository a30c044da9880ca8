"""OCRBench: 1,000 text-recognition and text-VQA questions in ten categories, scored out of 1000.

Read by the VLMEvalKit VQA table reader (:mod:`mmbatch.benchmarks.textvqa.read`); a prediction is right when it
contains one of the row's references (:mod:`mmbatch.answers.ocr_match`); :mod:`.score` counts the right answers per
category, per part and overall, as the benchmark's (and VLMEvalKit's) ``_score.json`` does.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

OCRBENCH = Benchmark(
    name="ocrbench",
    aliases=(),
    version="1.0",
    summary="OCRBench (VLMEvalKit TSV: ten categories, a reference found in the answer, score out of 1000)",
    reader="mmbatch.benchmarks.ocrbench.read:READER",
    scorer="mmbatch.benchmarks.ocrbench.score:SCORER",
    default_template="mme",
    default_mode="generate",
    answers="mmbatch.answers.ocr_match:OCR_MATCH",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "score", "Final Score"), ("part", None, "score", "{group}")),
                    ability=("category", "score")),
    export_formats=(),
    vlmevalkit_names=("ocrbench",),
    source_ids=None,
    sources=vlmevalkit_sources(("test", "OCRBench")),
)
"""OCRBench as VLMEvalKit runs it: the question as written, OCRBench's substring rule, counts out of 1000."""
