"""The recall API's refusals, measured: what a caller without the key can learn or cost.

1. Timing of a wrong key per profile: ``/p/<existing>`` vs ``/p/<missing>`` (median and p95 of
   ``Access.profile_for``, the check every route runs, and of ``GET /p/<name>/health`` on a real
   server, alternated); they should not differ beyond noise.
2. Memory of a real ``hermes recall serve`` fed four unauthenticated 300 MB bodies (RSS before,
   after), and one authenticated chunked 300 MB body (413 while streaming).

    python -m benchmarks api_edges [--rounds 20000] [--http-rounds 3000] [--skip-memory]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path

KEY = "bench-launch-key-0123456789"
OTHER = "bench-work-key-0123456789"


def _home(root: Path) -> Path:
    """The launch profile's files are small; ``work`` has what a used profile has: a dozen provider
    keys in its .env and a longer config.yaml (file size was what told the two refusals apart)."""
    home = root / "hermes"
    work = home / "profiles" / "work"
    work.mkdir(parents=True)
    (home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    (work / "config.yaml").write_text("model: {default: some-model}\n"
                                      + "".join(f"section{i}: {{a: {i}, b: [1, 2, 3]}}\n" for i in range(60))
                                      + "plugins:\n  enabled: [project-history-recall]\n")
    (home / ".env").write_text(f"RECALL_API_KEY={KEY}\n")
    (work / ".env").write_text(f"RECALL_API_KEY={OTHER}\n"
                               + "".join(f"PROVIDER_{i}_API_KEY=sk-{'x' * 40}\n" for i in range(12)))
    return home


def timing(home: Path, rounds: int) -> None:
    from hermes_side.api.access import Access
    from hermes_side.host.profile import profile_at

    access = Access(profile_at(home), KEY)
    wrong = "w" * len(OTHER)
    cases = {"existing /p/work": "work", "missing /p/nosuch": "nosuch"}
    samples: dict[str, list[float]] = {c: [] for c in cases}
    for _ in range(rounds):  # interleaved so drift hits both alike
        for label, name in cases.items():
            t = time.perf_counter_ns()
            assert access.profile_for(name, wrong) is None
            samples[label].append((time.perf_counter_ns() - t) / 1000)
    print(f"wrong key, Access.profile_for, {rounds} rounds each (µs)")
    _table(samples)


def _table(samples: dict[str, list[float]]) -> None:
    print(f"{'case':<20} {'p50':>8} {'p95':>8}")
    for label, values in samples.items():
        values.sort()
        print(f"{label:<20} {statistics.median(values):>8.1f} {values[int(len(values) * 0.95)]:>8.1f}")
    existing, missing = (statistics.median(v) for v in samples.values())
    print(f"ratio of the medians, existing / missing: {existing / missing:.3f}")


def http_timing(home: Path, root: Path, rounds: int) -> None:
    """``GET /p/<name>/health`` with a wrong key on a real ``hermes recall serve``, alternated."""
    import httpx

    from tests.e2e.recall_proc import RecallServer

    api = RecallServer(home, KEY, root / "recall-http.log")
    api.start()
    wrong = {"Authorization": f"Bearer {'w' * len(OTHER)}"}
    samples: dict[str, list[float]] = {"existing /p/work": [], "missing /p/nosuch": []}
    try:
        with httpx.Client(base_url=api.url, timeout=30) as client:
            for _ in range(50):  # warm up both paths
                client.get("/p/work/health", headers=wrong)
                client.get("/p/nosuch/health", headers=wrong)
            for n in range(rounds):
                order = list(samples.items()) if n % 2 else list(reversed(samples.items()))
                for label, values in order:
                    name = "work" if label.startswith("existing") else "nosuch"
                    t = time.perf_counter_ns()
                    assert client.get(f"/p/{name}/health", headers=wrong).status_code == 401
                    values.append((time.perf_counter_ns() - t) / 1000)
    finally:
        api.stop()
    print(f"\nwrong key, GET /p/<name>/health on a real server, {rounds} rounds each (µs)")
    _table(samples)



def _send(port: int, head: bytes, blocks: int, block: bytes) -> bytes:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    answer = b""
    try:
        sock.sendall(head)
        try:
            for _ in range(blocks):
                sock.sendall(block)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            while b"}" not in answer and (part := sock.recv(65536)):
                answer += part
        except ConnectionResetError:
            pass
    finally:
        sock.close()
    return answer.split(b"\r\n", 1)[0]


def memory(home: Path, root: Path) -> None:
    import httpx

    from tests.e2e.recall_proc import RecallServer

    api = RecallServer(home, KEY, root / "recall.log")
    api.start()
    try:
        httpx.get(api.url + "/projects", headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
        before = api.settled_rss_kib()
        mb = 1 << 20
        t = time.perf_counter()
        for _ in range(4):
            head = (f"POST /search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {'x' * 30}\r\n"
                    f"Content-Length: {300 * mb}\r\n\r\n").encode()
            status = _send(api.port, head, 300, b" " * mb)
        unauth = time.perf_counter() - t
        after_unauth = api.rss_kib()
        head = (f"POST /search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                "Transfer-Encoding: chunked\r\n\r\n").encode()
        chunked = _send(api.port, head, 300, b"%x\r\n%s\r\n" % (mb, b" " * mb))
        after = api.rss_kib()
    finally:
        api.stop()
    print("\nreal `hermes recall serve`, RSS (KiB)")
    print(f"before: {before}; after 4 × 300 MB unauthenticated ({status.decode()}, {unauth:.2f} s): "
          f"{after_unauth}; after a chunked 300 MB body with the key ({chunked.decode()}): {after}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20000)
    parser.add_argument("--http-rounds", type=int, default=3000)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-api-edges-") as tmp:
        root = Path(tmp)
        home = _home(root)
        os.environ["HERMES_HOME"] = str(home)
        timing(home, args.rounds)
        http_timing(home, root, args.http_rounds)
        if not args.skip_memory:
            memory(home, root)


if __name__ == "__main__":
    main()
