"""``hermes recall index | status | consent`` command functions, driven through argparse."""

from __future__ import annotations

import argparse

import pytest

from hermes_side.embedding import read_consent
from hermes_side.embedding.cli import (
    run_consent,
    run_index,
    setup_consent,
    setup_index,
)

from .helpers import write_config


def parse(setup, *argv):
    parser = argparse.ArgumentParser()
    setup(parser)
    return parser.parse_args(list(argv))


def projects(home):
    return {"alpha": ["a1", "a2"], "beta": ["b1"]}


def test_index_by_project_then_everything(history, capsys):
    history.turns("a1", "alpha notes", "alpha reply")
    history.turns("a2", "more alpha")
    history.turns("b1", "beta notes")
    run_index(parse(setup_index, "--project", "alpha"), projects_provider=projects, home=history.home)
    out = capsys.readouterr().out
    assert "Done: 3 messages checked, 3 chunks embedded" in out
    # (what `hermes recall status` shows of this is tested with the status contract, test_api.py)
    run_index(parse(setup_index), home=history.home)  # everything; alpha is skipped by hash
    assert "4 messages checked, 1 chunks embedded, 3 unchanged" in capsys.readouterr().out


def test_unknown_project_and_config_errors_exit_nonzero(history, capsys):
    history.turns("a1", "x")
    with pytest.raises(SystemExit) as err:
        run_index(parse(setup_index, "--project", "nope"), projects_provider=projects, home=history.home)
    assert err.value.code == 2 and "error: no project 'nope'" in capsys.readouterr().err
    write_config(history.home, {"chunk_sise": 3})
    with pytest.raises(SystemExit) as err:
        run_index(parse(setup_index), home=history.home)
    assert err.value.code == 2 and "chunk_sise" in capsys.readouterr().err


def test_consent_commands(home, capsys):
    run_consent(parse(setup_consent, "grant"), home=home, profile="default")
    assert "no consent is needed" in capsys.readouterr().out
    write_config(home, {"provider": "openai", "base_url": "http://127.0.0.1:9/v1"})
    run_consent(parse(setup_consent, "grant", "--projects", "alpha", "beta"), home=home, profile="default")
    assert "alpha, beta" in capsys.readouterr().out
    assert read_consent(home)["projects"] == ["alpha", "beta"]
    run_consent(parse(setup_consent, "show"), home=home, profile="default")
    assert '"endpoint": "http://127.0.0.1:9/v1"' in capsys.readouterr().out
    run_consent(parse(setup_consent, "revoke"), home=home, profile="default")
    assert "revoked" in capsys.readouterr().out and read_consent(home) is None


CTRL_C_SCRIPT = """
import sys
from argparse import Namespace
from pathlib import Path
from hermes_side.embedding.cli import run_index
run_index(Namespace(project=None, rebuild=False), home=Path(sys.argv[1]), profile="default")
"""


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_the_next_run_resumes(history, capsys):
    import signal
    import subprocess
    import sys
    import time

    from hermes_side.embedding import store

    history.turns("s1", *[f"turn {i}: a note about the deployment checklist item {i}" for i in range(120)])
    write_config(history.home, {"batch_size": 4})
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C_SCRIPT, str(history.home)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until the first batch is committed
        if store.store_path(history.home).exists():
            conn = store.connect(history.home)
            done = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            conn.close()
            if done:
                break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Stopping after the current batch" in err
    assert "Progress is saved; run `hermes recall index` again to resume" in err
    run_index(parse(setup_index), home=history.home)
    checked = int(capsys.readouterr().out.split("Done: ")[1].split(" messages")[0])
    assert 0 < checked < 120  # resumed at the marker, not from the start
    conn = store.connect(history.home)
    assert conn.execute("SELECT COUNT(DISTINCT message_id) FROM chunks").fetchone()[0] == 120
    conn.close()
