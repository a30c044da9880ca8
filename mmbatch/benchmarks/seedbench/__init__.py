"""SEED-Bench-1 and SEED-Bench-2 (and SEED-Bench-2-Plus): four-choice questions on images and videos.

Modules: :mod:`.questions` (the official JSON: records, dimension names, choices, answers), :mod:`.media_files`
(``data_id`` -> files under ``--media-root``, checked), :mod:`.rows` (typed prepared frames), :mod:`.read`
(SEED-Bench-1 ``READER``) and :mod:`.read2` (SEED-Bench-2 ``READER``).
"""
