"""``python -m benchmarks.worlds.synth``: the same as ``python -m benchmarks synth``."""

from .cli import main

main()
