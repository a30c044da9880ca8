"""``mmbatch compare``: two models on the rows both answered, metric by metric, with paired uncertainty.

:mod:`.paired` evaluates both models on the same bootstrap draws of the benchmark's units, :mod:`.mcnemar` tests the
unit-level verdicts, :mod:`.stage` reads the two hits files and writes the comparison.
"""
