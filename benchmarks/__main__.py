"""``python -m benchmarks <name> [args…]``: run one benchmark; without a name, list them all.

Each name maps to a module whose ``main(argv)`` parses its own arguments (``python -m benchmarks
<name> --help``). Adding a benchmark is one line in ``BENCHMARKS`` (and one in the README's index).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import sys
import time

# The worlds write the datasets' times in UTC, and their questions name days of that calendar;
# search reads a named day on the profile's calendar (host/clock.py: HERMES_TIMEZONE, config.yaml's
# timezone — the worlds set none — else the machine's), so every run reads it in UTC: the same
# figures on a developer's machine in Beijing as in CI.
os.environ["TZ"] = "UTC"
os.environ.pop("HERMES_TIMEZONE", None)
time.tzset()

BENCHMARKS: dict[str, str] = {  # name → module; the order of the index
    "dev": "benchmarks.bench_dev",
    "paired": "benchmarks.paired",
    "locomo": "benchmarks.bench_locomo",
    "ablate": "benchmarks.ablate",
    "conv_replay": "benchmarks.conv_replay",
    "chat_signals": "benchmarks.chat_signals",
    "compare_versions": "benchmarks.compare_versions",
    "cold_start": "benchmarks.bench_cold_start",
    "scale": "benchmarks.bench_scale",
    "keyword_ab": "benchmarks.bench_keyword_ab",
    "latency": "benchmarks.bench_latency",
    "forget": "benchmarks.bench_forget",
    "rules": "benchmarks.bench_rules",
    "indexing": "benchmarks.bench_indexing",
    "vector_scan": "benchmarks.bench_vector_scan",
    "api_edges": "benchmarks.bench_api_edges",
    "faults": "benchmarks.bench_faults",
    # the worlds and fixtures the benchmarks above run on
    "synth": "benchmarks.worlds.synth.cli",
    "fill_vectors": "benchmarks.fill_vectors",
    "locomo_world": "benchmarks.worlds.locomo",
    "groups_world": "benchmarks.worlds.groups",
}


def summary(module: str) -> str:
    """The first line of a module's docstring, read without importing it (no model, no numpy)."""
    spec = importlib.util.find_spec(module)
    with open(spec.origin, encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read())) or ""
    line = " ".join(doc.split("\n\n")[0].split())
    return line if len(line) <= 100 else line[:99].rsplit(" ", 1)[0] + " …"


def index() -> str:
    width = max(map(len, BENCHMARKS))
    lines = ["usage: python -m benchmarks <name> [args…]   (python -m benchmarks <name> --help)", ""]
    lines += [f"  {name:<{width}}  {summary(module)}" for name, module in BENCHMARKS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(index())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in BENCHMARKS:
        print(f"no benchmark named {name!r}\n\n{index()}", file=sys.stderr)
        return 2
    sys.argv = [f"benchmarks {name}", *rest]  # argparse's usage line names the command as typed
    return importlib.import_module(BENCHMARKS[name]).main(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
