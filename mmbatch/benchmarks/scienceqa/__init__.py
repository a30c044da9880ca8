"""ScienceQA, its questions with an image: ScienceQA_VAL (2,097) and ScienceQA_TEST (2,017), with a ``hint`` (the
context) and up to five options.

VLMEvalKit's TSV is an MMBench-style file read by the neutral VLMEvalKit reader. ``category`` holds the topic
(Adaptations, Magnets, ...: the per-topic table of VLMEvalKit's ``_acc.csv``, one row per ``split``), written exactly as
the TSV writes it: ``Oceans and continents`` and ``Oceans and continents\t`` (with a tab) are two topics there, and
here.

:mod:`.answers` reads answers by VLMEvalKit's rules and judge, or by LLaVA's or lmms-eval's rule
(``--kind-option answer_rule=llava|lmms-eval``, for their files: ``import --format llava-scienceqa`` and
``lmms-eval``); :mod:`.score` also tables ``data_type`` (image or text questions) where the rows have it.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

SCIENCEQA = Benchmark(
    name="scienceqa",
    aliases=(),
    version="1.0",
    summary="ScienceQA with images (VLMEvalKit TSV ScienceQA_VAL/ScienceQA_TEST, MMBench format; per-topic table)",
    reader="mmbatch.benchmarks.scienceqa.read:READER",
    scorer="mmbatch.benchmarks.scienceqa.score:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.benchmarks.scienceqa.answers:ANSWERS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"), ("data_type", "image", "acc", "IMG")),
                    ability=("category", "acc")),
    export_formats=(),
    vlmevalkit_names=("scienceqa_val", "scienceqa_test"),
    source_ids=None,
    sources=vlmevalkit_sources(("test", "ScienceQA_TEST"), ("val", "ScienceQA_VAL")),
)
"""ScienceQA as VLMEvalKit runs it: its default MCQ prompt with the hint, ``can_infer`` then the judge, accuracy
overall and per topic."""
