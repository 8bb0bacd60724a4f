# Sourced by demo.sh and test.sh: create .venv once and install this project with the given extra.
# A plain editable install (no compat mode): the tests and the NoneBot processes they start find
# nonebot_plugin_history_recall through the repo root on sys.path / PYTHONPATH, and Hermes loads
# hermes_side through the editable install's entry point.
setup_venv() {
  local extra="$1"
  [ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[$extra]"
}
