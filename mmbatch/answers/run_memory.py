"""What a rule gave for the distinct inputs of the earlier batches of a run, so that a file read in batches runs
each rule once per distinct input of the whole file, as one pass over the whole file would.

A million MMBench predictions hold 3,318 distinct (answer, options) pairs, and every batch holds most of them; a
TextVQA file 53,000 distinct (answer, references) pairs. Deciding them again in each batch would cost the Python of
the rules once per batch; remembered, a batch runs Python only over the inputs no earlier batch had.

A rule's result depends only on its inputs and on the values its code closes over (the answer kind, the settings,
the era of the rules: :func:`function_identity`), never on other rows or on state it changes: that is the contract
of :func:`mmbatch.answers.frames.decide_distinct`. What is remembered is keyed by exactly that, so two kinds, two
settings or two eras never share results. Rows are found again by a 64-bit hash of their cells and then compared
cell by cell, so a hash shared by two different inputs costs a decision, never a wrong one.

Memory lives while :func:`remembered_across_batches` is open (one stage run); outside it nothing is remembered. It
holds the inputs seen, so it is bounded (:data:`MEMORY_BYTES` per rule): inputs that do not repeat (a reasoning
model's long answers, every one its own) would only fill it, and once it is full a batch decides what it has not seen,
as without memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import FunctionType
from typing import Any

import polars as pl

_HASH, _POSITION = "__hash", "__position"
MEMORY_BYTES = 64 << 20
"""Most bytes of inputs remembered for one rule (polars' estimate): 3,318 MMBench (answer, options) inputs take
~1 MB, 53,000 TextVQA (answer, references) inputs ~10 MB."""


class RunMemory:
    """What the rules of one run gave, by what they depend on; and how many inputs were computed or taken back."""

    def __init__(self) -> None:
        self.results: dict[object, _Remembered] = {}
        self.computed = 0
        """Distinct inputs handed to a rule."""
        self.reused = 0
        """Distinct inputs of a batch whose result an earlier batch had computed."""
        self.lock = threading.RLock()
        """Held while the memory is read or changed: polars' writer makes batches from its own threads."""


_MEMORY: ContextVar[RunMemory | None] = ContextVar("mmbatch_run_memory", default=None)


@contextmanager
def remembered_across_batches() -> Iterator[RunMemory]:
    """Remember what rules give while this is open (a stage opens it around its batches)."""
    with remembered_in(RunMemory()) as memory:
        yield memory


def current_memory() -> RunMemory | None:
    """The memory open in this thread's context, if any."""
    return _MEMORY.get()


@contextmanager
def remembered_in(memory: RunMemory) -> Iterator[RunMemory]:
    """Use ``memory`` in this thread while this is open: a batch made in another thread (polars' writer calls back
    from its own, which do not see the stage's context) takes from the same memory."""
    token = _MEMORY.set(memory)
    try:
        yield memory
    finally:
        _MEMORY.reset(token)


def once_per_input(distinct: pl.DataFrame, compute: Callable[[pl.DataFrame], pl.DataFrame],
                   identity: object) -> pl.DataFrame:
    """``compute(distinct)``, one result row per row of ``distinct`` (rows told apart by all their cells), taking
    the results of the rows an earlier batch of this run already computed under the same ``identity``.

    ``identity`` is what the results depend on besides the cells (:func:`function_identity` of the rule); without
    an open :func:`remembered_across_batches` this is ``compute(distinct)``.
    """
    memory = _MEMORY.get()
    if memory is None or distinct.height == 0:
        return compute(distinct)
    with memory.lock:
        remembered = memory.results.get(identity)
        if remembered is None:
            results = compute(distinct)
            memory.computed += distinct.height
            memory.results[identity] = _Remembered(distinct, row_hashes(distinct), results)
            return results
        results, computed = remembered.results_for(distinct, compute)
        memory.computed += computed
        memory.reused += distinct.height - computed
        return results


def row_hashes(rows: pl.DataFrame) -> pl.Series:
    """A 64-bit hash of each row's cells, the same for equal rows whatever their frame (each column hashed where it
    lies with its own seed, then the row of those hashes)."""
    return pl.DataFrame([rows[name].hash(seed=position) for position, name in enumerate(rows.columns)]).hash_rows()


class _Remembered:
    """The inputs one rule saw in a run (distinct, with their hashes) and its results for them."""

    def __init__(self, inputs: pl.DataFrame, hashes: pl.Series, results: pl.DataFrame) -> None:
        first = hashes.is_first_distinct()  # two inputs sharing a hash: the later one is not remembered
        self.inputs = inputs.filter(first)
        self.results = results.filter(first)
        self.positions = pl.DataFrame({_HASH: hashes.filter(first)}).with_row_index(_POSITION)

    def results_for(self, distinct: pl.DataFrame, compute: Callable[[pl.DataFrame], pl.DataFrame]
                    ) -> tuple[pl.DataFrame, int]:
        """The results of ``distinct``'s rows, and how many of them had to be computed."""
        hashes = row_hashes(distinct)
        position = hashes.to_frame(_HASH).join(self.positions, on=_HASH, how="left",
                                               maintain_order="left")[_POSITION]
        at = position.fill_null(0)
        known = position.is_not_null()
        for name in distinct.columns:  # the same hash is not yet the same input: every cell must be equal
            known = known & distinct[name].eq_missing(self.inputs[name].gather(at))
        results = self.results.gather(at)
        if bool(known.all()):
            return results, 0
        new = ~known
        computed = compute(distinct.filter(new))
        places = new.arg_true()
        results = pl.DataFrame([results[name].scatter(places, computed[name]) for name in results.columns])
        unseen = new & position.is_null() & hashes.is_first_distinct()
        self._remember(distinct.filter(unseen), hashes.filter(unseen), results.filter(unseen))
        return results, computed.height

    def _remember(self, inputs: pl.DataFrame, hashes: pl.Series, results: pl.DataFrame) -> None:
        if inputs.height == 0 or self.inputs.estimated_size() >= MEMORY_BYTES:
            return
        start = self.positions.height
        self.inputs = pl.concat([self.inputs, inputs], how="vertical")
        self.results = pl.concat([self.results, results], how="vertical")
        added = pl.DataFrame({_HASH: hashes}).with_row_index(_POSITION, offset=start)
        self.positions = pl.concat([self.positions, added], how="vertical")


def function_identity(function: Callable[..., Any]) -> object:
    """What a pure function's results may depend on besides its arguments: its code and the values it closes over
    (its defaults too), as a key equal for equal closures.

    Values equal by value (text, numbers, frozen settings) count by value, lists and dicts by their items, other
    functions by their own identity, anything else (a kind holding a dict) by identity: the key holds a reference to
    it, so its identity is not reused while the key lives.
    """
    if not isinstance(function, FunctionType):
        return _ByIdentity(function)
    cells = tuple(_value_key(cell.cell_contents) for cell in function.__closure__ or ())
    return (function.__code__, cells, _value_key(function.__defaults__), _value_key(function.__kwdefaults__))


def _value_key(value: object) -> object:
    if isinstance(value, FunctionType):
        return function_identity(value)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_value_key(item) for item in value))
    if isinstance(value, dict):
        return ("dict", tuple((_value_key(key), _value_key(item)) for key, item in value.items()))
    try:
        hash(value)
    except TypeError:
        return _ByIdentity(value)
    return value


class _ByIdentity:
    """A value that is equal only to itself, held so that its identity stays its own."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByIdentity) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)
