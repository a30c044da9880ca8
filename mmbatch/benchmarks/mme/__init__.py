"""MME: 14 yes/no subtasks, two questions per image (protocols.md §6).

Modules: :mod:`.subtasks` (the subtask names and their perception/cognition part), :mod:`.release_folder` (the
official release folder and the official eval tool's question files), :mod:`.vlmevalkit_table` (VLMEvalKit's
``MME.tsv``), :mod:`.rows` (records to prepared rows) and :mod:`.read` (the ``READER`` of ``mmbatch prepare``).
"""
