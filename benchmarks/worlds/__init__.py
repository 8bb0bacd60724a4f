"""The histories the benchmarks search, each written through Hermes' own write paths.

- ``synth``: the synthetic scale world (``python -m benchmarks synth``), deterministic per seed;
- ``locomo``: LoCoMo conversations, one project each (``agent=True``: stored as an agent's work,
  ``locomo_agent``);
- ``locomo_zh``: the Chinese worlds of LoCoMo-zh (``zh``, pooled ``zhpool``, mixed ``zhmix``).
"""
