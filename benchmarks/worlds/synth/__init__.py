"""The synthetic scale world: a deterministic year of Hermes history (``python -m benchmarks synth``;
``cli.py`` says what it holds)."""
