"""Fetched, verified benchmark files: ``prepare --benchmark NAME [--split S]`` without ``--input``.

:mod:`.folder` says where files live (``MMBATCH_DATA``), :mod:`.download` downloads one file resumably and checks
its MD5, :mod:`.fetch` finds a benchmark's official file (declared in its
:class:`~mmbatch.benchmarks.declaration.SourceFile` list), fetching it when it is not there yet. docs/data.md.
"""
