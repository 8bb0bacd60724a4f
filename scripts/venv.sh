# Sourced by demo.sh and test.sh: create a venv once and install this project with the given extra.
#   setup_venv EXTRA [DIR [PYTHON]]    default DIR .venv, PYTHON $PYTHON or python3
# A plain editable install (no compat mode): the tests and the NoneBot processes they start find
# nonebot_plugin_history_recall through the repo root on sys.path / PYTHONPATH, and Hermes loads
# hermes_side through the editable install's entry point.
setup_venv() {
  local extra="$1" dir="${2:-.venv}" py="${3:-${PYTHON:-python3}}"
  [ -x "$dir/bin/python" ] || "$py" -m venv "$dir"
  "$dir/bin/python" -m pip install -q --upgrade pip
  "$dir/bin/python" -m pip install -q -e ".[$extra]"
}

# The Python for the newer Hermes line: 3.13 where this machine has it (upstream's managed
# environment is CPython 3.14; 3.13 is the newest here), else the default python3.
newer_python() {
  local candidate
  for candidate in "${PYTHON_NEWER:-}" python3.13 "$(command -v pyenv >/dev/null && pyenv root)"/versions/3.13*/bin/python3.13; do
    [ -n "$candidate" ] || continue
    if "$candidate" -c 'import sys, venv; assert sys.version_info >= (3, 11)' 2>/dev/null; then
      echo "$candidate"
      return
    fi
  done
  echo "${PYTHON:-python3}"
}
