"""Concurrency: searches, index runs and the recall API while Hermes' own SessionDB keeps writing.

Issue requirement: searches and index updates while a writer appends 20 messages/s through
SessionDB (as the gateway does): no errors reach the user, no "database is locked", nothing
written is missed by the next incremental index; 32 concurrent API clients: every request
answered, none failed.

The writer is a thread with its *own* ``SessionDB`` connection (the gateway is another process
with its own connection; SQLite's locking is per connection, so a thread shows the same
contention). The API test runs the real ``hermes recall serve`` process.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from hermes_side.embedding import build_index, catchup, load_settings, store, vectors
from hermes_side.embedding.providers import fingerprint_for
from hermes_side.scope import rule_view
from hermes_side.search.engine import SearchEngine
from hermes_side.search.request import parse_search_args
from hermes_side.stores.hermes_db import ro_uri
from hermes_side.stores.messages import MESSAGES_FROM, eligible_sql

pytestmark = pytest.mark.slow  # real processes or load: scripts/test.sh --fast skips it

PLUGIN_CONFIG = "plugins:\n  enabled: [project-history-recall]\n"
RATE = 20.0  # messages per second, as the issue asks
WRITE_SECONDS = 6.0
SEMANTIC_OK = ("ready", "partial", "indexing")
KEY = "concurrency-recall-key-0123456789"


# -- helpers -------------------------------------------------------------------------------------

@dataclass
class Written:
    id: int
    session_id: str
    role: str
    token: str
    at: float  # time.monotonic() after append_message returned (committed)


class Writer(threading.Thread):
    """Appends ``rate`` messages/s round-robin into ``sessions`` through its own SessionDB.

    Optionally creates a new session in the same folder after ``new_session_at`` seconds and
    does one ``rewind_to_message`` after ``rewind_at`` seconds (a user turn and its answer are
    appended and then taken back, as ``/undo`` does).
    """

    def __init__(self, home: Path, sessions: list[str], cwd: str, prefix: str, *, rate: float = RATE,
                 seconds: float = WRITE_SECONDS, new_session_at: float | None = None,
                 rewind_at: float | None = None) -> None:
        super().__init__(name=f"writer-{prefix}", daemon=True)
        self.home, self.sessions, self.cwd, self.prefix = Path(home), sessions, cwd, prefix
        self.rate, self.seconds, self.new_session_at, self.rewind_at = rate, seconds, new_session_at, rewind_at
        self.stop = threading.Event()
        self.written: list[Written] = []
        self.rewound: list[Written] = []
        self.errors: list[BaseException] = []
        self.new_session: str | None = None
        self._lock = threading.Lock()
        self._next_role = dict.fromkeys(self.sessions, 0)

    def latest(self) -> Written | None:
        with self._lock:
            return self.written[-1] if self.written else None

    def snapshot(self) -> list[Written]:
        with self._lock:
            return list(self.written)

    def run(self) -> None:
        from hermes_state import SessionDB

        try:
            db = SessionDB(db_path=self.home / "state.db")
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)
            return
        try:
            start = time.monotonic()
            n = 0
            while not self.stop.is_set() and time.monotonic() - start < self.seconds:
                elapsed = time.monotonic() - start
                if self.new_session_at is not None and self.new_session is None and elapsed >= self.new_session_at:
                    sid = f"{self.prefix}-late"
                    db.create_session(sid, "cli", cwd=self.cwd)
                    self._next_role[sid] = 0
                    self.sessions.append(sid)
                    self.new_session = sid
                if self.rewind_at is not None and not self.rewound and elapsed >= self.rewind_at:
                    self._rewind(db, self.sessions[0])
                sid = self.sessions[n % len(self.sessions)]
                role = ("user", "assistant")[self._next_role[sid] % 2]
                self._next_role[sid] += 1
                token = f"{self.prefix}{n:05d}"
                text = (f"Step {n} of the orbit deployment checklist: item {token} covers the rollout of"
                        f" service {n % 7} behind the canary.")
                mid = db.append_message(sid, role, text)
                with self._lock:
                    self.written.append(Written(mid, sid, role, token, time.monotonic()))
                n += 1
                pause = start + n / self.rate - time.monotonic()
                if pause > 0:
                    self.stop.wait(pause)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)
        finally:
            db.close()

    def _rewind(self, db, sid: str) -> None:
        ask = db.append_message(sid, "user", f"Wrong turn: drop the table {self.prefix}undo1 now")
        answer = db.append_message(sid, "assistant", f"Dropping {self.prefix}undo2 as asked")
        db.rewind_to_message(sid, ask)
        now = time.monotonic()
        self.rewound += [Written(ask, sid, "user", f"{self.prefix}undo1", now),
                         Written(answer, sid, "assistant", f"{self.prefix}undo2", now)]


def _join(thread: threading.Thread, timeout: float) -> None:
    thread.join(timeout)
    assert not thread.is_alive(), f"{thread.name} did not finish within {timeout}s"


def _ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(ro_uri(path), uri=True, timeout=10)


def _eligible_ids(home: Path) -> set[int]:
    conn = _ro(home / "state.db")
    try:
        rule_view.prepare(conn, home)  # the eligibility predicate reads what was forgotten
        return {r[0] for r in conn.execute(
            f"SELECT m.id {MESSAGES_FROM} WHERE {eligible_sql(conn)}")}
    finally:
        conn.close()


def _indexed_ids(home: Path) -> set[int]:
    conn = _ro(store.store_path(home))
    try:
        return store.indexed_message_ids(conn, fingerprint_for(load_settings(home)), None)
    finally:
        conn.close()


def _index_until_done(home: Path, **kw: Any):
    """One index run; an index run the searches started in the background may hold the lock."""
    deadline = time.monotonic() + 60
    while True:
        catchup.wait_for_catch_up(home, 60)
        stats = build_index(home, load_settings(home), **kw)
        if stats.status != "busy" or time.monotonic() > deadline:
            return stats
        time.sleep(0.1)


def _problems_in_logs(caplog) -> list[str]:
    out = []
    for record in caplog.records:
        text = record.getMessage() + "\n" + (caplog.handler.formatter or logging.Formatter()).format(record)
        if "database is locked" in text.lower():
            out.append(f"{record.name}: database is locked: {text[:300]}")
        elif record.name.startswith("hermes_side") and record.levelno >= logging.WARNING:
            out.append(f"{record.name} {record.levelname}: {text[:300]}")
    return out


@pytest.fixture
def background(world):
    """Join the plugin's background index runs and drop cached matrices after the test."""
    yield
    catchup.wait_for_catch_up(world.home, 120)
    vectors.drop_indexes()


# -- 1. searches + index runs while SessionDB writes -------------------------------------------

def test_searches_and_index_runs_during_20_writes_per_second(world, background, caplog):
    caplog.set_level(logging.DEBUG)
    home = world.home
    (home / "config.yaml").write_text(PLUGIN_CONFIG)
    folder = world.folder("orbit")
    pid = world.project("Orbit", folder)
    other = world.project("Nebula", world.folder("nebula"))
    seeds = [world.session(f"Orbit kickoff {i}: the deployment checklist lives in the runbook",
                           f"Noted, checklist {i} reviewed", cwd=folder) for i in range(3)]
    world.session("Nebula secret: the deployment checklist of nebula uses zebracode", "ok",
                  cwd=world.folder("nebula"))
    # Warm index and model: the concurrent phase then exercises incremental runs. (A cold
    # embeddings.db has a creation race of its own, see the xfail test below.)
    assert _index_until_done(home).status == "done"

    engine = SearchEngine(home)
    writer = Writer(home, [seeds[1], seeds[2]], str(folder), "quasar", new_session_at=2.5, rewind_at=3.5)
    finished = threading.Event()
    searches: list[tuple[dict, dict]] = []
    missed_fresh: list[str] = []
    index_runs: list[Any] = []
    errors: list[tuple[str, BaseException]] = []

    def reader() -> None:
        i = 0
        try:
            while not finished.is_set() and i < 400:
                mode = "hybrid" if i % 4 == 1 else "keyword"
                latest = writer.latest()
                if latest is not None and i % 4 < 2:
                    # Read-after-write: a message committed before the search started is found.
                    args = {"query": latest.token, "mode": "keyword", "limit": 10}
                    res = engine.search(parse_search_args(args), project=pid)
                    searches.append((args, res))
                    if latest.id not in {r["message_id"] for r in res["results"]}:
                        missed_fresh.append(latest.token)
                args = {"query": "deployment checklist rollout", "mode": mode, "limit": 5}
                if i % 3 == 2:
                    args["after"] = "1h"
                if i % 2:
                    res = engine.search(parse_search_args(args), session_id=seeds[0])  # the agent tool's scope
                else:
                    res = engine.search(parse_search_args(args), project=pid)
                searches.append((args, res))
                i += 1
        except BaseException as exc:  # noqa: BLE001
            errors.append(("reader", exc))

    def indexer() -> None:
        # Incremental runs only (no reconciliation), alternating a whole-profile run with one
        # limited to the project's sessions (per-session markers); the searches' background
        # catch-up competes for the same run lock, so "busy" is an expected outcome.
        try:
            run, pause = 0, 0.3
            while not finished.wait(pause) and run < 40:
                if run % 2 == 0:
                    sids = engine.scope_for(project=pid).session_ids
                    stats = build_index(home, load_settings(home), session_ids=sids, projects=[pid],
                                        reconcile=False)
                else:
                    stats = build_index(home, load_settings(home), reconcile=False)
                index_runs.append((run % 2 == 0, stats))
                run += stats.status != "busy"
                pause = 0.0 if stats.status == "busy" else 0.3
        except BaseException as exc:  # noqa: BLE001
            errors.append(("indexer", exc))

    threads = [threading.Thread(target=reader, name="reader", daemon=True),
               threading.Thread(target=indexer, name="indexer", daemon=True)]
    writer.start()
    for t in threads:
        t.start()
    _join(writer, WRITE_SECONDS + 20)
    finished.set()
    for t in threads:
        _join(t, 90)
    # What the runs that began while the writer wrote have indexed: once the writer stops no
    # run starts (the indexer and the searches that start a catch-up have stopped), and the ones
    # under way are let finish — on a loaded machine a run can outlast the writer's six seconds.
    catchup.wait_for_catch_up(home, 90)
    indexed_by_runs_during_writes = _indexed_ids(home)

    assert not writer.errors, writer.errors
    assert not errors, errors
    written = writer.snapshot()
    assert len(written) >= RATE * WRITE_SECONDS * 0.5, f"writer managed only {len(written)} messages"
    assert writer.new_session is not None and writer.rewound
    assert any(w.session_id == writer.new_session for w in written)

    # No errors reached the user: every search answered, in scope, semantic half working.
    assert len(searches) >= 10, len(searches)
    for args, res in searches:
        assert res["success"] is True, (args, res)
        assert res["project"]["id"] == pid, (args, res)
        assert all("zebracode" not in r["snippet"] for r in res["results"]), res
        if args["mode"] == "hybrid":
            assert res.get("semantic_status") in SEMANTIC_OK, (args, res)
    assert not missed_fresh, f"committed messages not found by the next search: {missed_fresh}"
    # Index updates ran while the writer wrote: the indexer thread's runs or, when it lost the
    # run lock to it, the catch-up the hybrid searches start in the background.
    assert index_runs and all(s.status in ("done", "busy") for _, s in index_runs), index_runs
    assert indexed_by_runs_during_writes & {w.id for w in written}, "no run begun during the writes indexed them"

    # Nothing written is missed by the next incremental (marker-only, no reconciliation) run.
    final = _index_until_done(home, reconcile=False)
    assert final.status == "done", final
    rewound = {w.id for w in writer.rewound}
    eligible = _eligible_ids(home)
    assert {w.id for w in written} <= eligible and not rewound & eligible
    missing = eligible - _indexed_ids(home)
    assert not missing, f"eligible messages without vectors after the incremental run: {sorted(missing)}"
    # A reconciling run then forgets the rewound turns, in case a run embedded them before the rewind.
    assert _index_until_done(home).status == "done"
    assert not rewound & _indexed_ids(home)
    assert eligible <= _indexed_ids(home)

    # The warm scope caches notice the last messages written and the session created mid-way (the
    # last five, not the last second's: a starved writer thread may write one in its last second).
    last = written[-5:]
    for w in last:
        res = engine.search(parse_search_args({"query": w.token, "mode": "keyword", "limit": 10}), project=pid)
        assert w.id in {r["message_id"] for r in res["results"]}, (w, res)
    late = [w for w in written if w.session_id == writer.new_session][-1]
    res = engine.search(parse_search_args({"query": late.token, "mode": "keyword"}), session_id=seeds[0])
    assert [r["session_id"] for r in res["results"]] == [writer.new_session], res
    for w in writer.rewound:
        res = engine.search(parse_search_args({"query": w.token, "mode": "keyword"}), project=pid)
        assert res["results"] == [], res
    hybrid = engine.search(parse_search_args({"query": "rollout of service behind the canary"}), project=pid)
    assert hybrid["semantic_status"] == "ready" and hybrid["results"], hybrid
    assert engine.search(parse_search_args({"query": "zebracode"}), project=other)["results"]

    assert not _problems_in_logs(caplog), _problems_in_logs(caplog)
    statuses = sorted({res.get("semantic_status", "-") for _, res in searches})
    runs = [("scoped" if scoped else "all", s.status, s.messages_scanned) for scoped, s in index_runs]
    print(f"{len(written)} messages written, {len(searches)} searches (semantic: {statuses}), index runs: {runs}")


# -- 2. 32 concurrent clients against `hermes recall serve` ---------------------------------------

CLIENTS = 32
CHAT, UNBOUND_CHAT = "onebotv11:111", "onebotv11:999"


def _bad_requests() -> list[tuple[str, dict[str, Any], int]]:
    """(what, request kwargs, expected status)."""
    auth = {"Authorization": f"Bearer {KEY}"}
    return [
        ("unknown project", {"json": {"query": "deploy", "project": "no-such-project"}, "headers": auth}, 404),
        ("empty query", {"json": {"query": "  ", "project": "apollo"}, "headers": auth}, 400),
        ("chat and project", {"json": {"query": "deploy", "project": "apollo", "chat": CHAT}, "headers": auth}, 400),
        ("unbound chat", {"json": {"query": "deploy", "chat": UNBOUND_CHAT}, "headers": auth}, 409),
        ("not JSON", {"content": b"{not json", "headers": {**auth, "Content-Type": "application/json"}}, 400),
        ("wrong key", {"json": {"query": "deploy", "project": "apollo"},
                       "headers": {"Authorization": "Bearer " + "w" * 32}}, 401),
        ("bad mode", {"json": {"query": "deploy", "project": "apollo", "mode": "fuzzy"}, "headers": auth}, 400),
        ("too long", {"json": {"query": "x" * 70_000, "project": "apollo"}, "headers": auth}, 413),
    ]


def test_32_concurrent_api_clients_while_sessiondb_writes(world, background, tmp_path):
    from hermes_side.stores import bindings
    from tests.e2e.recall_proc import RecallServer

    home = world.home
    (home / "config.yaml").write_text(PLUGIN_CONFIG)
    apollo_dir, borealis_dir = world.folder("apollo"), world.folder("borealis")
    apollo, borealis = world.project("Apollo", apollo_dir), world.project("Borealis", borealis_dir)
    apollo_sessions = [world.session(f"Apollo {i}: the deploy pipeline uses a kiwi canary",
                                     "Agreed, kiwi canary first then the fleet", cwd=apollo_dir) for i in range(4)]
    borealis_sessions = [world.session(f"Borealis {i}: the deploy pipeline ships behind a mango flag",
                                       "Yes, the mango flag stays off until QA signs", cwd=borealis_dir)
                         for i in range(4)]
    bindings.set_binding(home, CHAT, apollo)
    assert _index_until_done(home).status == "done"  # a warm store (see the cold-store xfail test)
    vectors.drop_indexes()

    server = RecallServer(home, KEY, tmp_path / "recall.log")
    writer = Writer(home, list(apollo_sessions[:2]), str(apollo_dir), "comet", seconds=120, new_session_at=1.0)
    outcomes: list[dict[str, Any]] = []
    outcomes_lock = threading.Lock()
    barrier = threading.Barrier(CLIENTS)
    bad = _bad_requests()

    def client(n: int) -> None:
        rng = random.Random(n)
        good = [
            ("keyword project", {"query": "deploy pipeline canary", "mode": "keyword", "project": "apollo"}, apollo),
            ("hybrid chat", {"query": "how do we deploy", "mode": "hybrid", "chat": CHAT}, apollo),
            ("hybrid project", {"query": "feature flag for QA", "mode": "hybrid", "project": borealis}, borealis),
            ("fresh token", None, apollo),
        ]
        plan: list[tuple[str, Any, Any]] = [*good, bad[n % len(bad)]]
        rng.shuffle(plan)
        with httpx.Client(base_url=server.url, timeout=60, trust_env=False) as http:
            barrier.wait(30)
            for what, body, expect in plan:
                outcome: dict[str, Any] = {"client": n, "what": what}
                try:
                    if isinstance(expect, int):  # a bad request: kwargs and expected status
                        response = http.post("/search", **body)
                        outcome.update(expect_status=expect)
                    else:
                        fresh = None
                        if body is None:
                            fresh = writer.latest()
                            body = {"query": fresh.token, "mode": "keyword", "project": apollo, "limit": 10}
                        response = http.post("/search", json=body, headers={"Authorization": f"Bearer {KEY}"})
                        outcome.update(expect_status=200, expect_project=expect, fresh=fresh)
                    outcome.update(status=response.status_code, body=response.json())
                except Exception as exc:  # noqa: BLE001 - a transport error is a failure to report
                    outcome.update(error=repr(exc))
                with outcomes_lock:
                    outcomes.append(outcome)

    try:
        server.start(timeout=90)
        writer.start()
        while writer.latest() is None or writer.new_session is None:
            assert writer.is_alive(), writer.errors
            time.sleep(0.05)
        clients = [threading.Thread(target=client, args=(n,), name=f"client-{n}", daemon=True)
                   for n in range(CLIENTS)]
        started = time.monotonic()
        for t in clients:
            t.start()
        for t in clients:
            _join(t, 150)
        elapsed = time.monotonic() - started
        writer.stop.set()
        _join(writer, 10)
        with httpx.Client(base_url=server.url, timeout=10, trust_env=False) as http:
            assert http.get("/health").json()["ok"] is True
    finally:
        writer.stop.set()
        server.stop()

    assert not writer.errors, writer.errors
    assert len(outcomes) == CLIENTS * 5
    transport = [o for o in outcomes if "error" in o]
    assert not transport, transport[:5]
    server_errors = [o for o in outcomes if o["status"] >= 500]
    assert not server_errors, server_errors[:5]
    wrong_status = [o for o in outcomes if o["status"] != o["expect_status"]]
    assert not wrong_status, wrong_status[:5]
    apollo_ids = set(apollo_sessions) | set(writer.sessions)
    for o in outcomes:
        body = o["body"]
        if o["expect_status"] != 200:
            assert body["success"] is False and body["code"], o
            continue
        assert body["success"] is True, o
        assert body["project"]["id"] == o["expect_project"], o
        allowed = apollo_ids if o["expect_project"] == apollo else set(borealis_sessions)
        assert {r["session_id"] for r in body["results"]} <= allowed, o
        assert body["results"], o
        if "semantic_status" in body:
            assert body["semantic_status"] in SEMANTIC_OK, o
        if o.get("fresh") is not None:
            assert o["fresh"].id in {r["message_id"] for r in body["results"]}, o
    log = server.log_text()
    for needle in ("database is locked", "Traceback", "recall API request failed", "semantic search failed"):
        assert needle not in log, log[-3000:]
    print(f"{len(outcomes)} requests from {CLIENTS} clients in {elapsed:.1f}s, "
          f"{len(writer.written)} messages written meanwhile")


# -- bugs found while writing the tests above ----------------------------------------------------

def test_search_while_the_first_index_run_creates_embeddings_db(world, background, caplog):
    caplog.set_level(logging.DEBUG)
    folder = world.folder("orbit")
    pid = world.project("Orbit", folder)
    world.session("Orbit kickoff: the deployment checklist lives in the runbook", "noted", cwd=folder)
    path = store.store_path(world.home)
    path.parent.mkdir(parents=True)
    # The first store.connect() of an index run has created the file and holds the write lock
    # while it switches it to WAL (deterministic stand-in for a few-millisecond window; a
    # free-running race of 4 threads hit it 5 times in 150 fresh stores).
    creator = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    creator.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, lambda: creator.execute("ROLLBACK"))
    release.start()
    try:
        res = SearchEngine(world.home).search(parse_search_args({"query": "deployment checklist"}), project=pid)
    finally:
        release.join()
        creator.close()
    assert res["success"] is True
    assert res["semantic_status"] in SEMANTIC_OK, res
    assert not _problems_in_logs(caplog), _problems_in_logs(caplog)


def test_scope_message_ids_stay_sorted_and_unique_when_searches_overlap(world):
    folder = world.folder("orbit")
    pid = world.project("Orbit", folder)
    sid = world.session(*[f"orbit note {i} about the canary" for i in range(6)], cwd=folder)
    engine = SearchEngine(world.home)
    req = parse_search_args({"query": "canary", "mode": "keyword"})
    engine.search(req, project=pid)

    # Search B (API thread 1) reads max(id) and is descheduled before it reaches the cache...
    slow_conn = _ro(world.home / "state.db")
    stale_max = slow_conn.execute("SELECT max(id) FROM messages").fetchone()[0]
    # ...the gateway commits new turns and search A (API thread 2) runs to the end...
    for i in range(4):
        world.db.append_message(sid, "user", f"later canary note {i}")
    done = threading.Thread(target=engine.search, args=(req,), kwargs={"project": pid})
    done.start()
    done.join(30)
    # ...then B resumes with the max(id) it read, exactly as SearchEngine._keyword passes it.
    smap = engine.scope_map()
    place = engine.scope_in(smap, project=pid).place
    engine.scope_messages.get(slow_conn, smap.sessions_in(place), stale_max)
    slow_conn.close()
    world.db.append_message(sid, "assistant", "one more canary note")
    engine.search(req, project=pid)

    conn = _ro(world.home / "state.db")
    max_id = conn.execute("SELECT max(id) FROM messages").fetchone()[0]
    truth = [r[0] for r in conn.execute("SELECT id FROM messages WHERE session_id = ? ORDER BY id", (sid,))]
    conn.close()
    with engine.leased() as leased:
        cached = engine.scope_messages.get(leased, smap.sessions_in(place), max_id)
    assert cached.tolist() == truth
    assert np.all(np.diff(cached) > 0)
