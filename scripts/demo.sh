#!/usr/bin/env bash
# The main job on the embedded default: set up .venv (idempotent), then index and search with the
# local multilingual model. Uses $HERMES_HOME when set (your profile); otherwise a throwaway home
# with a small Chinese/English demo history.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
setup_venv hermes
if [ -z "${HERMES_HOME:-}" ]; then
  HERMES_HOME="$(mktemp -d -t recall-demo-XXXXXX)"
  export HERMES_HOME
fi
exec .venv/bin/python -m hermes_side demo "$@"
