"""Generators of the bundled examples: each ``examples/generate/<name>.py`` writes ``examples/<name>/``.

Run them all with ``python examples/make_examples.py``; every output is deterministic.
"""
