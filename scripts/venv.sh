# Sourced by demo.sh and test.sh: create .venv once and install this project with the given extra.
# compat mode: NoneBot's plugin loader cannot see setuptools' default editable import hook.
setup_venv() {
  local extra="$1"
  [ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[$extra]" --config-settings editable_mode=compat
}
