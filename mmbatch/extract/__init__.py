"""The ``extract`` stage: official choice rules, an LLM judge that is cached, concurrent and never guesses.

Modules, in the order a row meets them: ``input_adapter`` (VLMEvalKit/LLaVA files), ``rule_pass`` (``choice_rules``,
MME yes/no rules, ``likelihood``), ``judge_phase`` (``judge``, ``judge_prompts``, ``judge_cache``), then ``stage``
writes the file and ``summary`` reports the run.
"""

from mmbatch.stage_modules import make_callable

make_callable(__name__)  # `from mmbatch import NAME` is the stage function (mmbatch/api.py)
