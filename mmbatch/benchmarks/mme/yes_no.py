"""MME's official yes/no rule (the MME tool's prefix rule, docs/rules.md §6) and MME's answer kind, which carries
it.

The official rule (the default) is what the MME leaderboard numbers come from; VLMEvalKit's word rule
(:func:`mmbatch.answers.yes_no.vlmevalkit_yes_no`, ``--yes-no-rule vlmevalkit``) is offered by name because its MME
numbers differ (LaVIN cognition 248.9286 instead of 249.6429).
"""

from __future__ import annotations

from mmbatch.answers.yes_no import NO, YES, YesNoKind

_PREFIX_LENGTH = 4


def official_yes_no(prediction: str) -> str | None:
    """The MME tool's rule: ``yes`` in the first four lower-cased characters, else ``no`` there, else None.

    The prediction is used as read, NOT stripped, so ``"know"`` is No, ``"eyes"`` is Yes and
    ``"The answer is yes."`` matches nothing (the tool's "other", always wrong).
    """
    prefix = prediction.lower()[:_PREFIX_LENGTH]
    if "yes" in prefix:
        return YES
    if "no" in prefix:
        return NO
    return None


ANSWERS = YesNoKind(official_rule=official_yes_no,
                    official_note="official yes/no rule: neither yes nor no in the first 4 characters")
"""MME's answer kind: yes/no, MME's prefix rule for ``--yes-no-rule official``."""
