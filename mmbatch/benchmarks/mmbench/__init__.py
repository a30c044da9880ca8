"""MMBench, CCBench and any MMBench-style multiple-choice TSV.

``read`` reads the VLMEvalKit files (checks, group keys, images), ``circular`` generates CircularEval copies,
``images`` checks the ``image`` column cheaply, ``checks`` holds the row checks every MCQ file must pass.
"""
