"""``mmbatch prepare --benchmark mathvision``: VLMEvalKit's ``MathVision.tsv`` or ``MathVision_MINI.tsv`` (options
as a Python list in ``choices``, ``answer`` the letter of an option question, the subject in ``category``)."""

from __future__ import annotations

from mmbatch.formats.vlmevalkit_tsv import VlmevalkitReader

READER = VlmevalkitReader("mathvision")
"""The neutral VLMEvalKit reader; the answers and choices are checked by the kind when extracted."""
