"""MMT-Bench: multiple-choice questions over 32 meta-tasks (``l2-category``) and 162 subtasks (``category``), up to nine
options (A-I); MMT-Bench_VAL has 3,127 questions with answers (``split`` VAL).

VLMEvalKit's TSV is an MMBench-style file read by the neutral VLMEvalKit reader; :mod:`.score` tables accuracy as
VLMEvalKit's ``report_acc_MMT`` does (a meta-task is the plain mean of its subtasks).
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

MMTBENCH = Benchmark(
    name="mmtbench",
    aliases=("mmt-bench",),
    version="1.0",
    summary="MMT-Bench (VLMEvalKit TSV MMT-Bench_VAL/_ALL, MMBench format with up to 9 options; 162 subtasks)",
    reader="mmbatch.benchmarks.mmtbench.read:READER",
    scorer="mmbatch.benchmarks.mmtbench.score:SCORER",
    default_template="vlmevalkit",
    default_mode="generate",
    answers="mmbatch.answers.choice:CHOICE",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "acc", "Overall"),),
                    ability=("l2-category", "acc")),
    export_formats=(),
    vlmevalkit_names=("mmt-bench_val", "mmt-bench_all", "mmt-bench_val_mi", "mmt-bench_all_mi"),
    source_ids=None,
    sources=vlmevalkit_sources(("val", "MMT-Bench_VAL"), ("all", "MMT-Bench_ALL"),
                               ("val-mi", "MMT-Bench_VAL_MI"), ("all-mi", "MMT-Bench_ALL_MI")),
)
"""MMT-Bench as VLMEvalKit runs it: its default MCQ prompt, ``can_infer`` then the judge, ``report_acc_MMT``."""
