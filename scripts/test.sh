#!/usr/bin/env bash
# Sets up .venv on a fresh machine (idempotent) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
setup_venv test
.venv/bin/ruff check .
# Hermes side and end-to-end tests: nonebug's pytest plugin must stay out of this run
# (it injects session fixtures that start NoneBot); the NoneBot matcher tests run on their own.
.venv/bin/python -m pytest -p no:nonebug tests --ignore=tests/nonebot -q "$@"
.venv/bin/python -m pytest tests/nonebot -q "$@"
# Both wheels built and installed into clean venvs (kept in .cache/venvs/ for the next run): the
# NoneBot plugin with only its own dependencies, hermes_side as a directory in a stock Hermes.
.venv/bin/python -m pytest -p no:nonebug tests/packaging -m packaging -q "$@"
