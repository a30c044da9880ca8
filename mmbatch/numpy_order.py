"""Sums of floats added in numpy's order, in plain Python: the same float, bit for bit, without importing numpy.

numpy adds float64 arrays pairwise (short runs in order, runs of up to 128 with eight accumulators), so a plain
``sum`` of the same values can differ in the last bit from what VLMEvalKit and the estimator computed with numpy.
Importing numpy costs a stage ~0.05-0.1 s, more than the sums themselves where they are few: ``score`` without
``--bootstrap`` and the VQA kind's per-row accuracies.
"""

from __future__ import annotations

from collections.abc import Sequence

_UNROLL = 8
"""numpy adds runs of up to :data:`_BLOCK` values with this many accumulators."""
_BLOCK = 128
"""Longest run numpy adds without splitting it in two (``PW_BLOCKSIZE``)."""


def numpy_sum(values: Sequence[float]) -> float:
    """``values`` summed as each segment of ``numpy.add.reduceat`` sums float64 (the estimator's cell sums): the first
    value, plus numpy's pairwise sum of the rest. A one-dimensional ``numpy.add.reduce`` (``numpy.sum``,
    ``numpy.mean``) sums pairwise from zero instead: :func:`numpy_mean`."""
    if not values:
        return 0.0
    return values[0] + _pairwise(values, 1, len(values) - 1) if len(values) > 1 else values[0]


def _pairwise(values: Sequence[float], start: int, count: int) -> float:
    """numpy's pairwise summation of ``values[start:start + count]``: short runs in order, runs up to a block with
    eight accumulators, longer ones split in two at a multiple of eight."""
    if count < _UNROLL:
        total = -0.0
        for position in range(start, start + count):
            total += values[position]
        return total
    if count <= _BLOCK:
        lanes = list(values[start:start + _UNROLL])
        whole = count - count % _UNROLL
        for offset in range(_UNROLL, whole, _UNROLL):
            for lane in range(_UNROLL):
                lanes[lane] += values[start + offset + lane]
        total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
        for position in range(start + whole, start + count):
            total += values[position]
        return total
    half = count // 2
    half -= half % _UNROLL
    return _pairwise(values, start, half) + _pairwise(values, start + half, count - half)


def numpy_mean(values: Sequence[float]) -> float:
    """``numpy.mean(values)`` of a list of floats: NaN for none; otherwise their sum divided by their count, where a
    one-dimensional array is summed pairwise from zero over all its values (not from the first value on, as
    :func:`numpy_sum`'s segments are: the two differ in the last bit, e.g. for ``[2/3, 2/3, 1/3, 1/3]``)."""
    if not values:
        return float("nan")
    return _pairwise(values, 0, len(values)) / len(values)
