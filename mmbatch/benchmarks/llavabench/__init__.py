"""LLaVA-Bench (in-the-wild): 60 open questions over 24 images in three categories (conversation, detailed
description, complex reasoning), each answer reviewed by a judge against GPT-4's reference answer (:mod:`.answers`),
scored as the relative score (:mod:`.score`)."""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

LLAVABENCH = Benchmark(
    name="llavabench",
    aliases=("llava-bench", "llava-bench-in-the-wild"),
    version="1.0",
    summary="LLaVA-Bench in-the-wild (VLMEvalKit TSV: question, caption, GPT-4's answer gpt4_ans, category); "
    "judge-reviewed relative score",
    reader="mmbatch.benchmarks.llavabench.read:READER",
    scorer="mmbatch.benchmarks.llavabench.score:SCORER",
    default_template="mme",
    default_mode="generate",
    answers="mmbatch.benchmarks.llavabench.answers:ANSWERS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "relative", "Overall"),
                              ("category", None, "relative", "{group}")),
                    ability=("category", "relative")),
    export_formats=(),
    vlmevalkit_names=("llavabench",),
    source_ids=None,
    sources=vlmevalkit_sources(("test", "LLaVABench")),
)
"""LLaVA-Bench as LLaVA and VLMEvalKit run it: the question as written (template ``mme``), a review of GPT-4's and
the model's answers, the relative score per category."""
