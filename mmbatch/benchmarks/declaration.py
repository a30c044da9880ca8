"""The :class:`Benchmark` declaration: everything the stages need to know about one benchmark, in one place.

Each benchmark package declares its benchmarks in its ``__init__`` (plain data plus ``module:attribute`` references,
so the declaration is cheap to import); :mod:`mmbatch.benchmarks.registry` lists them. The reader, the scorer, the
extract rule pass, the judge's group skipping, the report views, VLMEvalKit import and the CLI's ``--benchmark``
choices and help all read these declarations, so a benchmark is one package plus one registry line.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from mmbatch.references import load

if TYPE_CHECKING:
    from mmbatch.answers.kind import AnswerKind

GroupRule = Literal["circular-offset", "image-pair", "row"]
"""How ``g_index`` is derived for a file without one (see :func:`mmbatch.row_facts.group_index`):
``circular-offset`` is ``index % 1e6`` (MMBench's CircularEval copies), ``image-pair`` the smallest index of the rows
sharing (``category``, image) (MME's two questions per image), ``row`` the row's own index."""
GROUP_RULES: tuple[GroupRule, ...] = ("circular-offset", "image-pair", "row")

Headline = tuple[str, str | None, str, str]
"""(level, group or None for every group of the level, metric, column title; ``{group}`` is replaced)."""


@dataclass(frozen=True)
class ReportView:
    """Which metrics of a benchmark a leaderboard board shows."""

    headline: tuple[Headline, ...]
    """Summary columns, in order; columns without any value are left out."""
    ability: tuple[str, str] | None = None
    """(level, metric) of the per-ability table and chart."""
    detail: tuple[str, str] | None = None
    """(level, metric) of a finer table (MMBench L3 categories)."""


@dataclass(frozen=True)
class SourceFile:
    """One official file of a benchmark: what ``prepare --split`` fetches when no ``--input`` is given."""

    split: str
    """The ``--split`` that names it (``dev``, ``test``, ``dev-cn``...); the first declared is the default."""
    file: str
    """Its name, as published and as kept in the data folder (``MMBench_DEV_EN.tsv``)."""
    url: str | None
    """Where it is published; None when it is not downloadable (obtained by request)."""
    md5: str | None
    """The MD5 its publisher gives (checked before use); None when none is published, and then mmbatch does not
    download it: a file nobody vouches for is placed by hand."""
    how_to_get: str = ""
    """For a file mmbatch does not fetch: where to get it and what else to place (media folders)."""


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its names, its files, its answers, its scoring and its report.

    Every field is required, so a benchmark declared without one of them is a type error (and fails
    ``tests/test_benchmark_registry.py``), never a silent fallback somewhere in a stage.
    """

    name: str
    """The ``--benchmark`` name and the ``benchmark`` column value (lower case)."""
    aliases: tuple[str, ...]
    """Other names ``--benchmark`` accepts for it (lower case); rows still carry :attr:`name`."""
    version: str
    """Version of the benchmark's data and rules as mmbatch implements them, recorded in every stage's metadata."""
    summary: str
    """One line for ``--help``: what the benchmark is and which file format ``prepare`` reads."""
    reader: str
    """``module:attribute`` of its :class:`~mmbatch.benchmarks.base.Reader`."""
    scorer: str
    """``module:attribute`` of its :class:`~mmbatch.scoring.scorer.Scorer`."""
    default_template: str
    """Prompt template (a name in :data:`mmbatch.prompts.TEMPLATES`) when ``--prompt-template`` is not given."""
    default_mode: Literal["generate", "likelihood"]
    """``generate`` or ``likelihood`` when ``--mode`` is not given."""
    answers: str
    """``module:attribute`` of its :class:`~mmbatch.answers.kind.AnswerKind`: how ``extract`` reads a prediction
    and how a row is scored (``mmbatch.answers.choice:CHOICE`` for option letters)."""
    circular: bool
    """Whether rows form CircularEval groups: a group with one wrong row has failed, so the judge skips the rest of
    a group once one row is known wrong, and indices cannot be renumbered."""
    group_rule: GroupRule
    """How ``g_index`` is derived for a file that lacks it."""
    view: ReportView | None
    """The report's board for it; None shows every ``overall`` metric."""
    export_formats: tuple[str, ...]
    """``mmbatch export --format`` names that fit it; the first turns a file without answers into a submission.
    Empty for a benchmark whose answers are public (no submission server)."""
    vlmevalkit_names: tuple[str, ...]
    """VLMEvalKit dataset names (lower case) whose files ``import --format vlmevalkit`` recognises as this one."""
    source_ids: str | None
    """``module:attribute`` of the rule (:data:`mmbatch.benchmarks.source_ids.IdRule`) for a benchmark whose source
    ``index`` is text (HallusionBench's ``VD_illusion_1_0_0_0``, OCRVQA's ``184215012X_1``): it computes each row's
    integer ``index`` (and ``g_index`` where the key names the group) from its key alone, so every file and route
    gives a question the same one; the key is kept in ``question_id``. ``mmbatch.benchmarks.source_ids:key_digest``
    serves a key with no structure to pack. None: the source's ``index`` is an integer and ``g_index`` follows
    :attr:`group_rule`."""
    sources: tuple[SourceFile, ...]
    """Its official files, one per split, which ``prepare`` fetches when given no ``--input`` (docs/data.md);
    empty when there is none to fetch."""

    @property
    def names(self) -> tuple[str, ...]:
        """:attr:`name` then :attr:`aliases`."""
        return (self.name, *self.aliases)

    def kind(self) -> AnswerKind:
        """Its answer kind (:attr:`answers`), imported on first use."""
        kind: AnswerKind = _load_once(self.answers)
        return kind


@cache
def _load_once(target: str) -> Any:
    return load(target)
