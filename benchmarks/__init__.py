"""The benchmark suite: ``python -m benchmarks <name> [args…]`` from the repository root.

``python -m benchmarks`` lists every benchmark (``__main__.py`` holds the index); each benchmark is
a module with its own argparse ``main(argv)``, also runnable as ``python -m benchmarks.<module>``.
The worlds the benchmarks build (synthetic scale history, LoCoMo and its Chinese variants) are in
``benchmarks/worlds/``. Numbers: ``benchmarks/README.md``.
"""
