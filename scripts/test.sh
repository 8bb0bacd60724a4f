#!/usr/bin/env bash
# Sets up .venv on a fresh machine (idempotent) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# compat mode: NoneBot's plugin loader cannot see setuptools' default editable import hook
.venv/bin/python -m pip install -q -e ".[test]" --config-settings editable_mode=compat
.venv/bin/ruff check .
# Hermes side and end-to-end tests: nonebug's pytest plugin must stay out of this run
# (it injects session fixtures that start NoneBot); the NoneBot matcher tests run on their own.
.venv/bin/python -m pytest -p no:nonebug tests --ignore=tests/nonebot -q "$@"
.venv/bin/python -m pytest tests/nonebot -q "$@"
