"""Red-team holes of the recall API (issue 15, point 4), each reproduced from outside.

- the key is checked before the body is read, and the body is capped while it streams in;
- JSON nested too deeply and a ``message_id`` past SQLite's INTEGER answer 400, never a 500;
- a wrong key costs the same work whether or not the named profile exists.
"""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from hermes_side.api import access
from hermes_side.api.app import MAX_BODY_BYTES, create_app
from tests.e2e.recall_proc import RecallServer
from tests.hermes.test_api import WORK_KEY, add_profile

KEY = "hardening-test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
MB = 1 << 20


@pytest.fixture
def client(world):
    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    folder = world.folder("alpha")
    world.project("Alpha", folder)
    world.session("the canary goes first", "then the fleet", cwd=folder)
    return TestClient(create_app(world.home, KEY), raise_server_exceptions=False)


# -- deeply nested JSON and out-of-range numbers ---------------------------------------------------

@pytest.mark.parametrize("path", ["/search", "/context", "/move", "/chats/onebotv11:1/binding"])
def test_deeply_nested_json_is_a_400_not_a_traceback(client, path):
    method = client.put if path.endswith("/binding") else client.post
    response = method(path, headers=AUTH, content=b"[" * 20_000 + b"]" * 20_000)
    assert response.status_code == 400, response.text
    assert response.json() == {"success": False, "error": "body is nested too deeply", "code": "bad_request"}
    nested_in_object = b'{"query": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"
    assert method(path, headers=AUTH, content=nested_in_object).status_code == 400


@pytest.mark.parametrize("message_id", [2**63, 2**64 + 1, -(2**63) - 1, "9" * 19, "9" * 5000])
def test_message_id_past_sqlite_integer_is_a_400(client, message_id):
    response = client.post("/context", headers=AUTH, json={"chat": "onebotv11:1", "message_id": message_id})
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "bad_request"
    assert "message_id" in response.json()["error"]


def test_largest_sqlite_message_id_is_simply_not_found(client):
    """2**63-1 is a valid id that does not exist: the chat is unbound, so 409, not a 500."""
    response = client.post("/context", headers=AUTH, json={"chat": "onebotv11:1", "message_id": 2**63 - 1})
    assert response.status_code == 409 and response.json()["code"] == "chat_unbound"


# -- key before body, body capped while streaming --------------------------------------------------

def test_declared_oversized_body_with_a_key_is_413(client):
    response = client.post("/search", headers={**AUTH, "Content-Type": "application/json"},
                           content=b" " * (MAX_BODY_BYTES + 1))
    assert response.status_code == 413
    assert response.json() == {"success": False, "code": "body_too_large",
                               "error": f"request body too large (limit {MAX_BODY_BYTES} bytes)"}


def test_streamed_oversized_body_without_length_is_413(client):
    def chunks():  # chunked transfer: no Content-Length to refuse up front
        for _ in range(8):
            yield b" " * (16 * 1024)
        yield b"{}"

    response = client.post("/search", headers=AUTH, content=chunks())
    assert response.status_code == 413 and response.json()["code"] == "body_too_large"


def test_unauthenticated_body_is_never_read(client, monkeypatch):
    """401 before a byte of the body: the body's stream is never touched without the key."""
    from starlette.requests import Request

    reads: list[str] = []
    original = Request.stream

    def spy(self):
        reads.append(self.url.path)
        return original(self)

    monkeypatch.setattr(Request, "stream", spy)
    for path in ("/search", "/move", "/context"):
        response = client.post(path, headers={"Authorization": "Bearer " + "x" * 30}, content=b"{" * 1000)
        assert response.status_code == 401 and response.json()["code"] == "unauthorized"
    assert reads == []
    assert client.post("/search", headers=AUTH, json={"query": "canary", "project": "alpha"}).status_code == 200
    assert reads == ["/search"]



def _push_body(port: int, head: bytes, megabytes: int) -> bytes:
    """Send ``head`` then up to ``megabytes`` MB of body as fast as the server takes it; return
    what the server answered (it may answer and close before the body is all sent)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        sock.sendall(head)
        block = b" " * MB
        try:
            for _ in range(megabytes):
                sock.sendall(block)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the server answered and stopped reading: exactly what we want
        sock.settimeout(30)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and answer.rstrip().endswith(b"}"):
                    break
        except (ConnectionResetError, TimeoutError):
            pass
        return answer
    finally:
        sock.close()


@pytest.mark.slow  # a real process (recall API or shell)
@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"), reason="needs /proc for RSS")
def test_big_unauthenticated_bodies_do_not_grow_the_real_server(world, tmp_path):
    """Four 300 MB bodies without a key used to take ``hermes recall serve`` to 1.6 GB; now each
    gets its 401 at once and the server's memory stays put (a bound, not a benchmark)."""
    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    world.project("Alpha", world.folder("alpha"))
    api = RecallServer(world.home, KEY, tmp_path / "recall.log")
    api.start()
    try:
        httpx.get(api.url + "/projects", headers=AUTH, timeout=30)  # warm: imports done, caches filled
        before = api.settled_rss_kib()
        size = 300 * MB
        for _ in range(4):
            head = (f"POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    f"Authorization: Bearer {'x' * 30}\r\nContent-Length: {size}\r\n\r\n").encode()
            answer = _push_body(api.port, head, 300)
            assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
            assert b'"code":"unauthorized"' in answer
        # With the key: a declared 300 MB body is refused before reading, a chunked one while streaming.
        head = (f"POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Authorization: Bearer {KEY}\r\nContent-Length: {size}\r\n\r\n").encode()
        assert b'"code":"body_too_large"' in _push_body(api.port, head, 300)
        head = (f"POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Authorization: Bearer {KEY}\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
        chunk = b"%x\r\n%s\r\n" % (MB, b" " * MB)
        sock = socket.create_connection(("127.0.0.1", api.port), timeout=30)
        try:
            sock.sendall(head)
            answer = b""
            try:
                for _ in range(300):
                    sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            deadline = time.monotonic() + 30
            while b"}" not in answer and time.monotonic() < deadline:
                try:
                    part = sock.recv(65536)
                except ConnectionResetError:
                    break
                if not part:
                    break
                answer += part
        finally:
            sock.close()
        assert b" 413 " in answer.split(b"\r\n")[0] and b'"code":"body_too_large"' in answer, answer[:300]
        after = api.rss_kib()
        assert after - before < 16 * 1024, f"RSS grew from {before} to {after} KiB"
        assert httpx.get(api.url + "/projects", headers=AUTH, timeout=30).status_code == 200
    finally:
        api.stop()


# -- constant time in the profile ------------------------------------------------------------------

def test_wrong_key_does_the_same_work_whether_or_not_the_profile_exists(world, monkeypatch):
    """``/p/work`` (exists, plugin on), ``/p/off`` (exists, plugin off) and ``/p/nosuch`` answer a
    wrong key with the same 401 after the same calls: the same gate, the same number of
    constant-time comparisons, nothing skipped early — and, once read, no file parsed again until
    it changes (parsing cost with the files' size: a profile with a long .env answered later)."""
    import hmac

    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    (world.home / ".env").write_text(f"RECALL_API_KEY={KEY}\n")
    work = add_profile(world, "work", key=WORK_KEY)
    off = add_profile(world, "off", enabled=False, key=WORK_KEY)
    client = TestClient(create_app(world.home, KEY))
    calls: list[str] = []

    def spy(name, fn):
        def wrapper(*args, **kwargs):
            calls.append(name)
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(access, "_gate", spy("gate", access._gate))
    monkeypatch.setattr(access, "plugin_enabled", spy("plugin_enabled", access.plugin_enabled))
    monkeypatch.setattr(access, "env_file_key", spy("env_file_key", access.env_file_key))
    monkeypatch.setattr(access.hmac, "compare_digest", spy("compare_digest", hmac.compare_digest))
    (work.home / ".env").write_text(f"RECALL_API_KEY={WORK_KEY}\n" + "PROVIDER_API_KEY=sk-x\n" * 12)
    names = ("work", "off", "nosuch", "Bad..name")
    traces = {}
    for round_ in ("first", "again"):
        for name in names:
            calls.clear()
            response = client.get(f"/p/{name}/projects", headers={"Authorization": "Bearer " + "w" * 27})
            assert response.status_code == 401 and response.json()["code"] == "unauthorized"
            traces[round_, name] = list(calls)
    assert traces["first", "work"] == ["gate", "plugin_enabled", "env_file_key", "compare_digest", "compare_digest"]
    assert all(traces["again", name] == ["gate", "compare_digest", "compare_digest"] for name in names)
    calls.clear()
    assert client.get("/p/work/projects", headers={"Authorization": f"Bearer {WORK_KEY}"}).status_code == 200
    assert calls == traces["again", "work"]  # the right key: the same path again, no shortcut either way
    (work.home / ".env").write_text(f"RECALL_API_KEY={KEY}\n")  # a changed file is read again at once
    assert client.get("/p/work/projects", headers={"Authorization": f"Bearer {WORK_KEY}"}).status_code == 401
    work.close()
    off.close()
