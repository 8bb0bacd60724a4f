#!/usr/bin/env bash
# Sets up .venv on a fresh machine (idempotent) and runs the whole test suite (what CI runs).
#   bash scripts/test.sh            ruff + every test, packaging included
#   bash scripts/test.sh --fast     ruff + the tests not marked `slow`, no packaging: under a minute,
#                                   for a developer between edits (CI still runs everything)
# Any other arguments go to pytest (e.g. `-k move`, `-x`), in both modes.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then fast=1; else args+=("$arg"); fi
done
. scripts/venv.sh
if [ "$fast" = 1 ] && [ -x .venv/bin/python ]; then
  :  # the venv is there: skip the pip round-trip, it costs seconds on every run
else
  setup_venv test
fi
.venv/bin/ruff check .
if [ "$fast" = 1 ]; then
  .venv/bin/python -m pytest -p no:nonebug tests --ignore=tests/nonebot -q -m "not packaging and not slow" ${args[@]+"${args[@]}"}
  .venv/bin/python -m pytest tests/nonebot -q -m "not slow" ${args[@]+"${args[@]}"}
  exit
fi
# Hermes side and end-to-end tests: nonebug's pytest plugin must stay out of this run
# (it injects session fixtures that start NoneBot); the NoneBot matcher tests run on their own.
.venv/bin/python -m pytest -p no:nonebug tests --ignore=tests/nonebot -q ${args[@]+"${args[@]}"}
.venv/bin/python -m pytest tests/nonebot -q ${args[@]+"${args[@]}"}
# Both wheels built and installed into clean venvs (kept in .cache/venvs/ for the next run): the
# NoneBot plugin with only its own dependencies, hermes_side as a directory in a stock Hermes.
.venv/bin/python -m pytest -p no:nonebug tests/packaging -m packaging -q ${args[@]+"${args[@]}"}
