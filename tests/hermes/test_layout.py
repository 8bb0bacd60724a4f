"""The architecture as the imports draw it: each room imports only rooms below it, and no cycle.

Floors: ``errors``/``text``/``console`` (leaves) < ``host`` < ``stores`` < ``scope`` < ``embedding`` <
``search`` < ``actions`` < the surfaces (``api``, ``tools``, ``hooks``, ``demo``) < ``cli``, which
wires them up. Function-level imports count too: a lazy import is still a dependency. (``embedding``
sits above ``scope``: the indexer reads history through the same privacy rules as search,
``scope/rule_view.py``.)
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "hermes_side"
FLOOR = {"errors": 0, "text": 0, "console": 0, "host": 1, "stores": 2, "scope": 3, "embedding": 4, "search": 5,
         "actions": 6, "api": 7, "tools": 7, "hooks": 7, "demo": 7, "cli": 8, "__main__": 9}


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _edges() -> dict[str, set[str]]:
    mods = _modules()
    edges: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    full = f"{target}.{alias.name}".strip(".")
                    found.add(full if full in mods else target)
        edges[name] = {m for m in found if m in mods and m != name}
    return edges


def _room(module: str) -> str:
    return module.split(".")[0]


def test_every_module_has_a_floor():
    assert {_room(m) for m in _modules() if m} <= set(FLOOR)


def test_no_room_imports_a_room_above_or_beside_it():
    upward = sorted(f"{a} -> {b}" for a, targets in _edges().items() for b in targets
                    if a and b and _room(a) != _room(b) and FLOOR[_room(b)] >= FLOOR[_room(a)])
    assert upward == []


def test_no_import_cycle():
    edges, seen, on_path, cycles = _edges(), set(), [], []

    def walk(module: str) -> None:
        if module in on_path:
            cycles.append(on_path[on_path.index(module):] + [module])
            return
        if module in seen:
            return
        seen.add(module)
        on_path.append(module)
        for target in sorted(edges[module]):
            walk(target)
        on_path.pop()

    for module in sorted(edges):
        walk(module)
    assert cycles == []
