"""OCR-VQA: questions about book covers (title, author, genre, ...), in VLMEvalKit's OCRVQA_TEST and OCRVQA_TESTCORE.

Read by the VLMEvalKit VQA table reader (its ``<ISBN>_<n>`` index is text: each row's integer ``index`` is a digest
of its key, :mod:`mmbatch.benchmarks.source_ids`, the key kept in ``question_id``); right when the stripped answer
equals a reference ignoring case (:mod:`mmbatch.answers.exact_match`); accuracy overall and per genre
(``category``), as VLMEvalKit's ``_acc.csv``. Version 1.1: the ``index`` of a key no longer depends on the row's
position (docs/contract.md, row identity).
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

OCRVQA = Benchmark(
    name="ocrvqa",
    aliases=("ocrvqa_testcore", "ocrvqa_test"),
    version="1.1",
    summary="OCRVQA (VLMEvalKit TSV OCRVQA_TEST/OCRVQA_TESTCORE: book covers, exact answers, genre in category)",
    reader="mmbatch.benchmarks.ocrvqa.read:READER",
    scorer="mmbatch.benchmarks.textvqa.score:SCORER",
    default_template="vlmevalkit-vqa",
    default_mode="generate",
    answers="mmbatch.answers.exact_match:EXACT_MATCH",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Accuracy"),), ability=("category", "acc")),
    export_formats=(),
    vlmevalkit_names=("ocrvqa_test", "ocrvqa_testcore"),
    source_ids="mmbatch.benchmarks.source_ids:key_digest",
    sources=vlmevalkit_sources(("test", "OCRVQA_TEST"), ("testcore", "OCRVQA_TESTCORE")),
)
"""OCRVQA as VLMEvalKit runs it: its short-answer prompt, exact match, accuracy per genre."""
