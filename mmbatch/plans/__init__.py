"""Run plans: many models on many benchmarks from one file (``mmbatch run --plan plan.yaml``).

:mod:`.values` turns a plan's YAML values into stage option values (checked by each stage's own option declaration),
:mod:`.read` reads and validates a plan file into a :class:`~.spec.Plan`, :mod:`.oneline` builds the same plan from
``run --benchmark a,b --model X --model Y``, :mod:`.layout` says where every file goes, :mod:`.units` cuts the plan
into ``(model, benchmark, shard)`` units for ``--shard K/N``, :mod:`.session` loads each model once for all its
benchmarks, and :mod:`.runner` runs the units and finishes each pair. docs/plans.md describes the file and layout.
"""
