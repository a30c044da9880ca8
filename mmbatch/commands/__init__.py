"""One module per command: ``register(subparsers)`` adds its options, ``run(args)`` returns its exit status."""
