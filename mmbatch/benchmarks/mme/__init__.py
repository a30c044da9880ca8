"""MME: 14 yes/no subtasks, two questions per image (docs/rules.md §6).

Modules: :mod:`.subtasks` (the subtask names and their perception/cognition part), :mod:`.release_folder` (the
official release folder and the official eval tool's question files), :mod:`.vlmevalkit_table` (VLMEvalKit's
``MME.tsv``), :mod:`.rows` (records to prepared rows) and :mod:`.read` (the ``READER`` of ``mmbatch prepare``).
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import Benchmark, ReportView

MME = Benchmark(
    name="mme",
    aliases=(),
    version="1.0",
    summary="MME (the release folder, the eval tool's question files or VLMEvalKit's MME.tsv)",
    reader="mmbatch.benchmarks.mme.read:READER",
    scorer="mmbatch.benchmarks.mme.score:SCORER",
    default_template="mme",
    default_mode="generate",
    answers="mmbatch.benchmarks.mme.yes_no:ANSWERS",
    circular=False,
    group_rule="image-pair",
    view=ReportView(headline=(("total", "perception", "score", "Perception"),
                              ("total", "cognition", "score", "Cognition")),
                    ability=("subtask", "score")),
    export_formats=("mme-eval-tool",),
    vlmevalkit_names=("mme",),
    source_ids=None,
)
"""MME: acc, acc+ and score per subtask (docs/rules.md §6)."""
