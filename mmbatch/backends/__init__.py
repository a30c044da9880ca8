"""Model backends: one module each (its ``create_backend`` and its options class), declared in
:mod:`mmbatch.backends.registry` and imported only when chosen."""
