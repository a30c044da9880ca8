"""HallusionBench: yes/no questions about figures, charts, maps, tables, illusions and videos, each asked of
several versions of a figure (VD: visual dependent; VS: visual supplement), scored per question, per figure and per
question across figures.

:mod:`.ids` turns its text question ids into mmbatch's integer ``index`` and question sets (``g_index``),
:mod:`.read` reads VLMEvalKit's ``HallusionBench.tsv``, :mod:`.answers` is its yes/no kind (VLMEvalKit's word rule,
then its judge), :mod:`.score` reports aAcc, fAcc and qAcc overall, per category and per subcategory, as VLMEvalKit's
``Hallusion_rating`` does.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

HALLUSIONBENCH = Benchmark(
    name="hallusionbench",
    aliases=(),
    version="1.0",
    summary="HallusionBench (VLMEvalKit TSV: yes/no questions, text ids VD_illusion_1_0_0_0, VD/VS in 'category')",
    reader="mmbatch.benchmarks.hallusionbench.read:READER",
    scorer="mmbatch.benchmarks.hallusionbench.score:SCORER",
    default_template="mme",
    default_mode="generate",
    answers="mmbatch.benchmarks.hallusionbench.answers:ANSWERS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "aAcc", "aAcc"), ("overall", "Overall", "fAcc", "fAcc"),
                              ("overall", "Overall", "qAcc", "qAcc"), ("category", None, "aAcc", "{group} aAcc")),
                    ability=("l2-category", "aAcc")),
    export_formats=(),
    vlmevalkit_names=("hallusionbench",),
    source_ids="mmbatch.benchmarks.hallusionbench.ids:packed_ids",
    sources=vlmevalkit_sources(("val", "HallusionBench")),
)
"""HallusionBench as VLMEvalKit runs it: the question as written (template ``mme``), VLMEvalKit's yes/no word rule
then its judge for what the rule leaves Unknown, aAcc/fAcc/qAcc."""
