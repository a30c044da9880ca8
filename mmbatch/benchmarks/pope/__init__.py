"""POPE: yes/no object-hallucination questions in the ``adversarial``, ``popular`` and ``random`` splits.

:mod:`.read` reads VLMEvalKit's ``POPE.tsv``, :mod:`.yes_no` is the POPE paper's answer rule and :mod:`.score`
reports accuracy, precision, recall, F1 and the Yes ratio per split and overall, as VLMEvalKit does.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView
from mmbatch.benchmarks.vlmevalkit_files import vlmevalkit_sources

POPE = Benchmark(
    name="pope",
    aliases=(),
    version="1.0",
    summary="POPE (VLMEvalKit TSV: yes/no questions, splits adversarial/popular/random in 'category')",
    reader="mmbatch.benchmarks.pope.read:READER",
    scorer="mmbatch.benchmarks.pope.score:SCORER",
    default_template="mme",
    default_mode="generate",
    answers="mmbatch.benchmarks.pope.yes_no:ANSWERS",
    circular=False,
    group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "f1", "F1"), ("overall", "Overall", "acc", "Accuracy"),
                              ("split", None, "f1", "{group} F1"), ("overall", "Overall", "split_mean_f1", "mean F1"),
                              ("overall", "Overall", "yes_ratio", "Yes ratio")),
                    ability=("split", "f1")),
    export_formats=(),
    vlmevalkit_names=("pope",),
    source_ids=None,
    sources=vlmevalkit_sources(("test", "POPE")),
)
"""POPE as VLMEvalKit runs it: the question as written (template ``mme``), the POPE rule for yes/no."""
