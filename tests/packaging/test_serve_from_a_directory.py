"""``hermes recall serve`` from a directory install (the README's first route) on a stock Hermes of
each line: its terminal and ``recall-api.log`` get every request line and every refusal with its
reason, and the start-up line says where the key came from — never the key.

A directory plugin is imported as ``hermes_plugins.project_history_recall``, not ``hermes_side``:
handlers on the logger ``hermes_side`` caught nothing there (issue 38), and every line went to
Hermes' own ``agent.log``.
"""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.recall_proc import RecallServer
from tests.packaging.test_hermes_dir_install import (  # noqa: F401 (two fixtures)
    Home,
    copy_plugin,
    enable_in_config,
    has,
    hermes_venv,
    newer_hermes_venv,
)

pytestmark = pytest.mark.packaging

KEY = "directory-install-key-0123456789"
WRONG = "not-the-key-0123456789abcdef"


@pytest.mark.parametrize("line", ["hermes_venv", "newer_hermes_venv"])
def test_a_directory_install_logs_every_request_and_refusal_to_the_terminal_and_the_file(line, request, tmp_path):
    venv = request.getfixturevalue(line)
    assert "hermes_side" not in has(venv, "hermes_side")  # the plugin comes from the directory alone
    h = Home(venv, tmp_path)
    copy_plugin(h.home)
    enable_in_config(h.home)
    (h.home / ".env").write_text(f"RECALL_API_KEY={KEY}\n", encoding="utf-8")
    terminal = tmp_path / "terminal.txt"
    server = RecallServer(h.home, KEY, terminal, hermes=venv / "bin" / "hermes",
                          env={"RECALL_API_KEY": None, "HERMES_HOME": str(h.home)})
    server.start(timeout=120)
    try:
        assert httpx.get(f"{server.url}/projects", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
        assert httpx.get(f"{server.url}/projects", headers={"Authorization": f"Bearer {WRONG}"}).status_code == 401
        assert httpx.get(f"{server.url}/projects").status_code == 401
    finally:
        server.stop()
    logged = (h.home / "logs" / "recall-api.log").read_text(encoding="utf-8")
    shown = terminal.read_text(encoding="utf-8")
    for text in (shown, logged):
        assert f"key: RECALL_API_KEY from {h.home / '.env'}" in text
        assert "GET /projects → 200" in text
        assert "refused GET /projects from 127.0.0.1: wrong key for the launch profile" in text
        assert "refused GET /projects from 127.0.0.1: no 'Authorization: Bearer <key>' header" in text
        assert KEY not in text and WRONG not in text
