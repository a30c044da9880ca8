"""Every benchmark mmbatch knows: one line per built-in :class:`~mmbatch.benchmarks.declaration.Benchmark`, and
those installed packages declare under the ``mmbatch.benchmarks`` entry-point group.

Adding a benchmark is a package under ``mmbatch/benchmarks/`` that declares it, plus one line here; a lab's own
package declares its benchmarks as entry points instead, without editing mmbatch (docs/adding-a-benchmark.md).
Entry points are read on the first lookup, not when the CLI is built. Lookups accept the name or an alias, any case.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

from mmbatch.benchmarks.declaration import Benchmark, load
from mmbatch.errors import BadInputError

if TYPE_CHECKING:
    from mmbatch.answers.kind import AnswerKind

DECLARATIONS: tuple[str, ...] = (
    "mmbatch.benchmarks.mmbench:MMBENCH",
    "mmbatch.benchmarks.mmbench:CCBENCH",
    "mmbatch.benchmarks.mme:MME",
    "mmbatch.benchmarks.seedbench:SEEDBENCH",
    "mmbatch.benchmarks.seedbench:SEEDBENCH2",
    "mmbatch.benchmarks.pope:POPE",
    "mmbatch.benchmarks.mmstar:MMSTAR",
    "mmbatch.benchmarks.hallusionbench:HALLUSIONBENCH",
    "mmbatch.benchmarks.ai2d:AI2D",
    "mmbatch.benchmarks.realworldqa:REALWORLDQA",
    "mmbatch.benchmarks.scienceqa:SCIENCEQA",
    "mmbatch.benchmarks.aokvqa:AOKVQA",
    "mmbatch.benchmarks.mmtbench:MMTBENCH",
    "mmbatch.benchmarks.blink:BLINK",
    "mmbatch.benchmarks.textvqa:TEXTVQA",
    "mmbatch.benchmarks.chartqa:CHARTQA",
    "mmbatch.benchmarks.ocrvqa:OCRVQA",
    "mmbatch.benchmarks.ocrbench:OCRBENCH",
    "mmbatch.benchmarks.docvqa:DOCVQA",
    "mmbatch.benchmarks.infovqa:INFOVQA",
    "mmbatch.benchmarks.gqa:GQA",
    "mmbatch.benchmarks.mathvista:MATHVISTA",
    "mmbatch.benchmarks.mathvision:MATHVISION",
    "mmbatch.benchmarks.mmvet:MMVET",
    "mmbatch.benchmarks.llavabench:LLAVABENCH",
    "mmbatch.benchmarks.mmmu:MMMU",
)
"""``module:attribute`` of every built-in :class:`Benchmark`, in the order help texts list them."""

BUILT_IN: tuple[Benchmark, ...] = tuple(load(target) for target in DECLARATIONS)
"""The built-in benchmarks (a package's declaration is plain data: importing it reads no reader or scorer)."""

ENTRY_POINT_GROUP = "mmbatch.benchmarks"
"""The entry-point group an installed package declares its benchmarks in: each entry point names a Benchmark as
``module:attribute``."""

BUILT_IN_PACKAGE = "mmbatch"


@cache
def registered() -> tuple[Benchmark, ...]:
    """Every benchmark: the built-in ones, then those of installed packages (by package name, then entry point).

    Raises:
        BadInputError: a plug-in cannot be loaded or is no Benchmark, or two packages declare the same name, alias
            or VLMEvalKit dataset name (naming both packages).
    """
    from importlib.metadata import entry_points

    owners = {name: BUILT_IN_PACKAGE for benchmark in BUILT_IN for name in _claimed(benchmark)}
    plugins: list[Benchmark] = []
    points = sorted(entry_points(group=ENTRY_POINT_GROUP),
                    key=lambda point: (point.dist.name if point.dist else "", point.name))
    for point in points:
        package = point.dist.name if point.dist is not None else point.value
        try:
            benchmark = point.load()
        except Exception as exc:  # a third-party import can fail in any way: say which package, never crash
            raise BadInputError(f"the benchmark plug-in {point.name!r} of package {package} ({point.value}) cannot be "
                                f"loaded: {type(exc).__name__}: {exc}") from exc
        if not isinstance(benchmark, Benchmark):
            raise BadInputError(f"the benchmark plug-in {point.name!r} of package {package} names {point.value}, "
                                f"which is a {type(benchmark).__name__}, not an mmbatch Benchmark")
        for name in _claimed(benchmark):
            if name in owners:
                raise BadInputError(f"two packages declare the benchmark name {name.partition(':')[2]!r}: "
                                    f"{owners[name]} and {package} (entry point {point.name} = {point.value}); "
                                    "uninstall one or rename its benchmark")
            owners[name] = package
        plugins.append(benchmark)
    return BUILT_IN + tuple(plugins)


def _claimed(benchmark: Benchmark) -> list[str]:
    """The names a benchmark takes: its name and aliases, and its VLMEvalKit dataset names (kept apart)."""
    return [f"name:{name}" for name in benchmark.names] + [f"vlmevalkit:{n}" for n in benchmark.vlmevalkit_names]


@cache
def _by_name() -> dict[str, Benchmark]:
    return {name: benchmark for benchmark in registered() for name in benchmark.names}


def find_benchmark(name: str | None) -> Benchmark | None:
    """The benchmark called ``name`` (or one of its aliases, any case); None for an unknown or missing name."""
    if name is None:
        return None
    return _by_name().get(str(name).lower())


def get_benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``.

    Raises:
        BadInputError: no benchmark has that name; the message lists the known ones.
    """
    benchmark = find_benchmark(name)
    if benchmark is None:
        close = difflib.get_close_matches(str(name).lower(), sorted(_by_name()), n=1, cutoff=0.6)
        hint = f"did you mean {_by_name()[close[0]].name!r}? " if close else ""
        raise BadInputError(f"unknown benchmark {name!r}; {hint}choose one of {', '.join(benchmark_names())}",
                            column="benchmark")
    return benchmark


def benchmark_names() -> tuple[str, ...]:
    """The registered names (aliases left out), for help texts and errors."""
    return tuple(benchmark.name for benchmark in registered())


def benchmark_help() -> str:
    """One line per benchmark for ``--benchmark`` help: ``name: summary``."""
    return "; ".join(f"{benchmark.name}: {benchmark.summary}" for benchmark in registered())


def answer_kinds(names: Iterable[str]) -> dict[str, AnswerKind]:
    """The answer kind of each ``benchmark`` value in ``names`` (by value as written, in order); a name no benchmark
    has is read as option letters, as ``extract`` reads any MMBench-style file."""
    from mmbatch.answers.choice import CHOICE

    kinds: dict[str, AnswerKind] = {}
    for name in names:
        benchmark = find_benchmark(name)
        kinds[name] = CHOICE if benchmark is None else benchmark.kind()
    return kinds
