"""A real ``hermes recall serve`` process: ``/health`` answers while searches hold every worker.

The searches are made slow without any timing: the profile uses a remote embedding provider (a
loopback server with fake but stable vectors) whose answers to query embeddings are held back
until the test opens a gate. Every search thread of the server then waits on the provider or on
the per-profile search gate — and ``/health`` must still answer.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from hermes_side.search.engine import MAX_CONCURRENT
from tests.e2e.recall_proc import RecallServer
from tests.hermes.embedding.helpers import _fake_vector

pytestmark = pytest.mark.slow  # real processes or load: scripts/test.sh --fast skips it

KEY = "saturation-test-key-0123456789"
SEARCHES = 16  # more than the server's worker threads (8)


class HeldProvider:
    """An OpenAI-compatible ``/v1/embeddings`` on loopback; while ``held``, it does not answer."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.release.set()
        self.waiting = 0
        self._lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                with provider._lock:
                    provider.waiting += 1
                provider.release.wait()
                with provider._lock:
                    provider.waiting -= 1
                raw = json.dumps({"data": [{"index": i, "embedding": _fake_vector(t, 8)}
                                           for i, t in enumerate(texts)]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def provider():
    p = HeldProvider()
    yield p
    p.close()


@pytest.fixture
def server(world, provider, tmp_path):
    """An indexed profile with a consented remote provider, served by a real process."""
    from hermes_side.embedding import build_index, load_settings, record_consent
    from tests import yamlio as yaml

    folder = world.folder("alpha")
    world.project("Alpha", folder)
    for i in range(6):
        world.session(f"deploy note {i}: the canary goes first", "then the fleet", cwd=folder)
    config = {"plugins": {"enabled": ["project-history-recall"], "project-history-recall": {"embedding": {
        "provider": "openai", "model": "fake-8d", "base_url": provider.base_url, "timeout": 600}}}}
    (world.home / "config.yaml").write_text(yaml.safe_dump(config))
    settings = load_settings(world.home)
    record_consent(world.home, settings, None, ["*"])
    build_index(world.home, settings)
    api = RecallServer(world.home, KEY, tmp_path / "recall.log")
    api.start()
    yield api
    provider.release.set()
    api.stop()


def test_health_answers_while_searches_hold_every_worker(server, provider):
    provider.release.clear()
    answers: list[httpx.Response] = []

    def search(i: int) -> None:
        answers.append(httpx.post(f"{server.url}/search", headers={"Authorization": f"Bearer {KEY}"},
                                  json={"query": f"canary question {i}", "project": "alpha", "mode": "semantic"},
                                  timeout=300))

    threads = [threading.Thread(target=search, args=(i,)) for i in range(SEARCHES)]
    for t in threads:
        t.start()
    # Wait (by state, not by time) until the server's searches are stuck on the provider.
    deadline = threading.Event()
    for _ in range(600):
        if provider.waiting >= MAX_CONCURRENT:
            break
        deadline.wait(0.1)
    assert provider.waiting >= MAX_CONCURRENT, server.log_text()[-2000:]

    health = httpx.get(f"{server.url}/health", timeout=30)
    profile_health = httpx.get(f"{server.url}/p/default/health", headers={"Authorization": f"Bearer {KEY}"},
                               timeout=30)
    assert health.status_code == 200 and health.json()["ok"] is True
    assert profile_health.status_code == 200 and profile_health.json()["profile"] == "default"
    assert answers == [] and all(t.is_alive() for t in threads)  # every search was still waiting

    provider.release.set()
    for t in threads:
        t.join(300)
    assert len(answers) == SEARCHES
    assert all(a.status_code == 200 and a.json()["semantic_status"] == "ready" for a in answers), \
        [a.text[:200] for a in answers]


@pytest.mark.parametrize("shared", [False, True])
def test_real_server_opens_each_profile_with_its_own_key(world, tmp_path, shared):
    """``hermes recall serve`` in the default profile: /p/work needs work's own key unless the
    operator started the server with ``--share-key-with work``; keys never reach its log."""
    from tests.hermes.test_api import WORK_KEY, add_profile

    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    world.project("Launch", world.folder("launch"))
    work = add_profile(world, "work", key=WORK_KEY)
    work.project("Ops", work.folder("ops"))
    api = RecallServer(world.home, KEY, tmp_path / "recall.log", ("--share-key-with", "work") if shared else ())
    api.start()
    try:
        def names(path: str, key: str) -> list[str] | int:
            r = httpx.get(api.url + path, headers={"Authorization": f"Bearer {key}"}, timeout=30)
            return [p["name"] for p in r.json()["projects"]] if r.status_code == 200 else r.status_code

        assert names("/projects", KEY) == ["Launch"]
        assert names("/p/work/projects", WORK_KEY) == ["Ops"]
        assert names("/projects", WORK_KEY) == 401
        assert names("/p/work/projects", KEY) == (["Ops"] if shared else 401)
        assert names("/p/nosuch/projects", KEY) == 401
    finally:
        api.stop()
        work.close()
    log = api.log_text()
    assert KEY not in log and WORK_KEY not in log
    assert ("its key also opens: work" in log) is shared
