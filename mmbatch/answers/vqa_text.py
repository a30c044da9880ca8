"""VQA answer normalisation as VLMEvalKit applies it (from the VQA evaluation code), quirks kept.

Neutral: VLMEvalKit's yes/no word rule (:mod:`mmbatch.answers.yes_no`) reads predictions through it, and the VQA
kinds normalise predictions and reference answers with it (:func:`vqa_normalise`: VLMEvalKit's ``process_answer``
of each era; :func:`evalai_normalise`: the answer processor of the TextVQA authors' evaluator).
"""

from __future__ import annotations

import re

# VLMEvalKit's copy of the VQA-eval punctuation cleaner, quirks kept: the period regex's look-behind is misspelt
# (``(?!<=\d)``), and ``re.UNICODE`` lands in the ``count`` argument of ``sub``, so at most 32 periods go.
_PUNCTUATION = [";", r"/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",",
                "?", "!"]
_COMMA_BETWEEN_DIGITS = re.compile(r"(\d)(,)(\d)")
_PERIOD = re.compile(r"(?!<=\d)(\.)(?!\d)")
_PERIOD_SUB_COUNT = int(re.UNICODE)
_ANY_MARK = re.compile("[" + re.escape("".join(_PUNCTUATION)) + ".]")


def strip_vqa_punctuation(text: str, period: re.Pattern[str] = _PERIOD) -> str:
    """VLMEvalKit's ``process_punctuation`` (from the VQA evaluation code), byte for byte in behaviour; ``period``
    is the era's period pattern (:data:`PERIOD_RULES`; default: the misspelt one of the VQA evaluation code)."""
    if _ANY_MARK.search(text) is None:  # most answers: nothing to remove (a fast path, same result)
        return text
    out = text
    has_digit_comma = _COMMA_BETWEEN_DIGITS.search(text) is not None
    for mark in _PUNCTUATION:
        if mark not in text:  # replacing never brings a mark in: one absent from the text is absent from `out`
            continue
        if (mark + " " in text or " " + mark in text) or has_digit_comma:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    return period.sub("", out, count=_PERIOD_SUB_COUNT)


# VLMEvalKit fixed the look-behind in 928a95b0 (2025-05-13): since then a period right after a digit stays, so "2010."
# no longer reads as "2010" (TextVQA scores of chatty models drop by up to 9 points). The 32-period cap stayed.
_PERIOD_SINCE_2025 = re.compile(r"(?<!\d)\.(?!\d)")

PERIOD_RULES: dict[str, re.Pattern[str]] = {"vlmevalkit": _PERIOD_SINCE_2025, "vlmevalkit-2024": _PERIOD}
"""The period pattern of each era of VLMEvalKit's ``process_punctuation``: today's (since 928a95b0, 2025-05-13) and
the one before, which the VQA evaluation code (and the TextVQA authors' evaluator) also use."""

_NUMBER_WORDS = {"none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
                 "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10"}
_ARTICLES = frozenset({"a", "an", "the"})
# The VQA evaluation's contraction table, as ``written=normalised`` pairs. Keys holding capitals (``Im``, ``Ive``)
# never match, since the words are lower-cased first; ``somebody'd`` really maps to ``somebodyd``.
_CONTRACTION_PAIRS = (
    "'ow'sat='ow's'at 'ows'at='ow's'at I'dve=I'd've Id've=I'd've Im=I'm Ive=I've aint=ain't arent=aren't cant=can't",
    "couldn'tve=couldn't've couldnt=couldn't couldnt've=couldn't've couldve=could've didnt=didn't doesnt=doesn't",
    "dont=don't hadn'tve=hadn't've hadnt=hadn't hadnt've=hadn't've hasnt=hasn't havent=haven't he'dve=he'd've",
    "hed=he'd hed've=he'd've hes=he's howd=how'd howll=how'll hows=how's isnt=isn't it'dve=it'd've itd=it'd",
    "itd've=it'd've itll=it'll let's=let's maam=ma'am mightn'tve=mightn't've mightnt=mightn't mightnt've=mightn't've",
    "mightve=might've mustnt=mustn't mustve=must've neednt=needn't notve=not've oclock=o'clock oughtnt=oughtn't",
    "ow's'at='ow's'at shant=shan't she'dve=she'd've she's=she's shed've=she'd've shouldn'tve=shouldn't've",
    "shouldnt=shouldn't shouldnt've=shouldn't've shouldve=should've somebody'd=somebodyd somebody'dve=somebody'd've",
    "somebodyd've=somebody'd've somebodyll=somebody'll somebodys=somebody's someone'dve=someone'd've",
    "someoned=someone'd someoned've=someone'd've someonell=someone'll someones=someone's",
    "something'dve=something'd've somethingd=something'd somethingd've=something'd've somethingll=something'll",
    "thats=that's there'dve=there'd've thered=there'd thered've=there'd've therere=there're theres=there's",
    "they'dve=they'd've theyd=they'd theyd've=they'd've theyll=they'll theyre=they're theyve=they've twas='twas",
    "wasnt=wasn't we'dve=we'd've wed've=we'd've werent=weren't weve=we've whatll=what'll whatre=what're whats=what's",
    "whatve=what've whens=when's whered=where'd wheres=where's whereve=where've who'dve=who'd've whod=who'd",
    "whod've=who'd've wholl=who'll whos=who's whove=who've whyll=why'll whyre=why're whys=why's wont=won't",
    "wouldn'tve=wouldn't've wouldnt=wouldn't wouldnt've=wouldn't've wouldve=would've y'all'dve=y'all'd've",
    "y'alld've=y'all'd've y'allll=y'all'll yall=y'all yall'd've=y'all'd've yall'll=y'all'll you'dve=you'd've",
    "youd=you'd youd've=you'd've youll=you'll youre=you're youve=you've",
)
_CONTRACTIONS = dict(pair.split("=") for line in _CONTRACTION_PAIRS for pair in line.split())


_WORD_MAP = {**_CONTRACTIONS, **_NUMBER_WORDS}
"""Number words and contractions in one table: no number word is a contraction or an article, and no digit is a
contraction either, so one look-up per word does what the evaluation's two passes do."""


def digits_without_articles(text: str) -> str:
    """The VQA evaluation's ``processDigitArticle``: lower-cased words, number words as digits (``none`` is ``0``),
    articles dropped, contractions given their apostrophe, joined by single spaces."""
    words = [word for word in text.lower().split() if word not in _ARTICLES]
    if not _WORD_MAP.keys().isdisjoint(words):  # most answers have no word to replace: skip the second pass
        words = [_WORD_MAP.get(word, word) for word in words]
    return " ".join(words)


def vqa_normalise(text: str, era: str = "vlmevalkit") -> str:
    """VLMEvalKit's ``process_answer`` of one era (:data:`PERIOD_RULES`): line breaks and tabs as spaces, stripped,
    punctuation, then :func:`digits_without_articles`."""
    flat = text.replace("\n", " ").replace("\t", " ").strip()
    return digits_without_articles(strip_vqa_punctuation(flat, PERIOD_RULES[era]))


def evalai_normalise(text: str) -> str:
    """The answer processor of the TextVQA authors' evaluator (EvalAI's, in MMF's ``TextVQAAccuracyEvaluator``, which
    LLaVA's ``eval_textvqa`` runs): lower-cased, commas and question marks dropped, ``'s`` split off as a word, then
    the same punctuation (old period pattern) and digit/article steps as VLMEvalKit."""
    words = text.lower().replace(",", "").replace("?", "").replace("'s", " 's").strip()
    flat = words.replace("\n", " ").replace("\t", " ").strip()
    return digits_without_articles(strip_vqa_punctuation(flat, _PERIOD))
