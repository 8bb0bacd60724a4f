"""Issue 34 §5: a stateful, model-based test of forget, opt-out and recall-off against everything
Hermes does to its rows — on the real Hermes (its ``SessionDB``, its CLI ``/branch``), the real
plugin (its tools through Hermes' dispatch), the real recall API and the real local model.

Hypothesis interleaves members' turns in two groups — 111 talks in per-member sessions, 444 in one
shared session (``HERMES_SESSION_SHARE_GROUP=true``) with and without the bridge's sender tag — with
reply quotes and ``<recent_messages>`` blocks, Hermes' compaction and compression, the operator's
``/branch`` (and notes in it), ``/rewind``, ``/move``, every form of ``/forget``, opt-out/in,
recall-off/on, re-indexing and a restart. After every step the model (``rules_model.py``) is the
oracle: nothing out is shown on any surface, and nothing else is lost (``_check``).

CI runs a fixed budget on each Hermes line: ``RECALL_STATEFUL_EXAMPLES`` sequences of at most
``RECALL_STATEFUL_STEPS`` steps (default 16 × 16) from the fixed seed ``RECALL_STATEFUL_SEED``
(default 34); ``RECALL_STATEFUL=big`` runs a larger one (60 × 40) from a random seed. A failure
prints the seed that reproduces the run, the shortest failing sequence of steps (Hypothesis shrinks
it) with what each step did, and a reproduction blob.
"""

from __future__ import annotations

import atexit
import json
import os
import random
import shutil
import sqlite3
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Verbosity, note, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from hermes_side.api.app import create_app
from hermes_side.hooks import on_pre_llm_call
from hermes_side.search.reader import SearchError, reader_for
from hermes_side.stores import bindings, forgotten
from hermes_side.stores.messages import MESSAGES_FROM, eligible_sql, message_text
from tests.hermes import hermes_ops
from tests.hermes.rules_model import OPERATOR, Model, Said
from tests.hermes.world import World, call_tool_raw, indexed_ids, load_plugin, unload_plugin

try:  # the code before issue 34 kept quotes under stores/ (the test also runs there: see the note)
    from hermes_side.scope import quotes
except ImportError:  # pragma: no cover
    from hermes_side.stores import quotes

KEY = "stateful-rules-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
G111, G444 = "onebotv11:111", "onebotv11:444"
PLAN = "计划"  # Chinese on every turn: the English question "… plan" is searched by it too
MEMBERS = ("10002", "10003", "10004")
NICKS = {"10002": "Ann", "10003": "Bob", "10004": "Cy"}
SHARED = "hermes-onebotv11+group+444"
BIG = os.environ.get("RECALL_STATEFUL") == "big"
ROOT = tempfile.mkdtemp(prefix="recall-stateful-")
atexit.register(shutil.rmtree, ROOT, True)
EXAMPLES = int(os.environ.get("RECALL_STATEFUL_EXAMPLES", 60 if BIG else 16))
STEPS = int(os.environ.get("RECALL_STATEFUL_STEPS", 40 if BIG else 16))
SEED = int(os.environ.get("RECALL_STATEFUL_SEED") or (random.randrange(2**32) if BIG else 34))


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


def as_sent(ts: float) -> float:
    """The time the API reads from ``iso(ts)`` (microseconds): the model cuts where the server does."""
    return datetime.fromisoformat(iso(ts)).timestamp()


def tagged(uid: str, text: str) -> str:
    """A shared session's turn in the bridge's reactive form (nonebot-plugin-hermes 0.5.5)."""
    return (f"<runtime_state>\nyou: [user=bot id=1]\n</runtime_state>\n\n<recent_messages>\n</recent_messages>\n\n"
            f"<current_message>\n[user={NICKS[uid]} id={uid}]: {text}\n</current_message>")


class RecallRules(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        # Kept to the end of the run: Hermes' log handler keeps the first home's logs/ open.
        root = Path(tempfile.mkdtemp(prefix="example-", dir=ROOT))
        self.home = root / "hermes-home"
        self.home.mkdir()
        os.environ["HERMES_HOME"] = str(self.home)
        self.world = World(self.home, root / "work")
        load_plugin(self.home)
        alpha, alpha2, gamma = (self.world.folder(n) for n in ("alpha", "alpha2", "gamma"))
        bindings.set_binding(self.home, G111, self.world.project("Alpha", alpha))
        self.world.project("Alpha2", alpha2)
        bindings.set_binding(self.home, G444, self.world.project("Gamma", gamma))
        self.client = TestClient(create_app(self.home, KEY))
        self.model = Model()
        self.sessions: dict[str, str] = {}  # G111 member → their current session; G444 → the shared one
        self.fresh: dict[str, bool] = {}  # session → its last exchange is live, never compacted
        self.branches: list[str] = []
        self.n = self.maintained = 0

    def teardown(self) -> None:
        unload_plugin()
        self.world.close()

    # -- writing turns --------------------------------------------------------------------------
    def token(self) -> str:
        self.n += 1
        return "zq" + "".join(chr(97 + (self.n // 26 ** i) % 26) for i in range(4))

    def session_of(self, chat: str, member: str) -> str:
        key = SHARED if chat == G444 else member
        if key not in self.sessions:
            sid = SHARED if chat == G444 else f"hermes-onebotv11+group+111+{member}"
            self.world.db.create_session(sid, "api_server")
            on_pre_llm_call(session_id=sid)  # the plugin's first-turn hook places it, as in Hermes
            self.sessions[key] = sid
            self.model.lineage[sid] = sid
        return self.sessions[key]

    def write(self, chat: str | None, author: str, sid: str, text: str, own: str, answer: str | None) -> None:
        """A member's turn (and the agent's answer): the bridge's api_server turn, as SessionDB stores it."""
        now = time.time()
        index = len(self.model.said)
        self.world.db.append_message(sid, "user", text, timestamp=now)
        self.model.said.append(Said(own, chat, author, "user", text, now, sid, index))
        if answer is not None:
            self.world.db.append_message(sid, "assistant", f"ack {answer}", timestamp=now + 0.0001)
            self.model.said.append(Said(answer, chat, author, "assistant", f"ack {answer}", now + 0.0001, sid, index))
        self.fresh[sid] = answer is not None  # its last exchange: a /rewind target
        note(f"{sid}: {author or 'someone'} said {own}")

    @initialize(turns=st.lists(st.tuples(st.sampled_from([G111, G444]), st.sampled_from(MEMBERS), st.booleans()),
                               min_size=2, max_size=5))
    def start(self, turns: list[tuple[str, str, bool]]) -> None:
        note(f"RECALL_STATEFUL_SEED={SEED} (with RECALL_STATEFUL_EXAMPLES={EXAMPLES} RECALL_STATEFUL_STEPS={STEPS})"
             " reproduces this run")
        for chat, member, tag in turns:
            self.turn(chat, member, tag, "none", None)

    TURN = {"chat": st.sampled_from([G111, G444]), "member": st.sampled_from(MEMBERS), "tag": st.booleans(),
            "quote": st.sampled_from(["none", "reply", "recent", "repeat"]), "data": st.data()}

    @rule(**TURN)
    def say(self, chat: str, member: str, tag: bool, quote: str, data) -> None:
        self.turn(chat, member, tag, quote, data)

    @rule(**TURN)
    def say_more(self, chat: str, member: str, tag: bool, quote: str, data) -> None:
        """Turns are most of what a group does (a second rule: drawn twice as often)."""
        self.turn(chat, member, tag, quote, data)

    def turn(self, chat: str, member: str, tag: bool, quote: str, data) -> None:
        """A turn of ``member``: plain, quoting an earlier turn (``(引用: …)``, a ``<recent_messages>``
        line), or in group 111 the very words another member said (``repeat``)."""
        own = self.token()
        # "计划" on every turn: an English question ("… plan") is then also searched by its Chinese
        # words (search/question.py, _reverse), a list that reaches every turn of the scope that says it.
        words, repeated = f"{own} is the plan {PLAN}", False
        earlier = [s for s in self.model.said if s.chat == chat and s.role == "user"]
        if quote != "none" and earlier and data is not None:
            quoted = data.draw(st.sampled_from(earlier), label="quoted")
            line = f"{quoted.token} is the plan {PLAN}"  # the member's own words, as the bridge quotes them
            if quote == "repeat" and chat == G111:
                own, words, repeated = quoted.token, line, True
            elif quote == "reply":
                words = f"(引用: {line}) {words}"
            elif quote == "recent":
                words = (f"<recent_messages>\n[user={NICKS.get(quoted.author, 'x')} id={quoted.author or '1'}]:"
                         f" {line}\n</recent_messages>\n\n{words}")
        sid = self.session_of(chat, member)
        if chat == G444:
            text, author = (tagged(member, words), member) if tag else (words, "")
        else:
            text, author = words, member
        self.write(chat, author, sid, text, own, None if repeated else self.token())

    # -- what Hermes does to its rows ------------------------------------------------------------------
    @precondition(lambda self: self.sessions)
    @rule(op=st.sampled_from(["compact", "rotate", "branch", "rewind"]), data=st.data())
    def hermes_rewrites(self, op: str, data) -> None:
        # Drawn by who talks there (stable): a rotation's child id holds the clock and random bytes.
        sid = self.sessions[data.draw(st.sampled_from(list(self.sessions)), label="whose")]
        if op == "compact":
            keep = data.draw(st.integers(1, 4), label="keep")
            hermes_ops.compact(self.world.db, sid, keep)
            self.fresh[sid] = False
        elif op == "rotate":
            key = next(k for k, v in self.sessions.items() if v == sid)
            child = hermes_ops.rotate(self.world.db, sid)
            on_pre_llm_call(session_id=child, parent_session_id=sid)
            self.sessions[key] = child
            self.model.lineage[child] = self.model.lineage.get(sid, sid)
            self.fresh[child] = self.fresh[sid] = False
            sid = f"{sid} -> {child}"
        elif op == "branch":
            branch = hermes_ops.branch(self.world.db, sid)
            if branch == sid:  # nothing live to branch (Hermes: "No conversation to branch")
                return
            self.branches.append(branch)
            if data.draw(st.booleans(), label="operator writes notes"):
                own = self.token()
                self.write(None, OPERATOR, branch, f"{own} internal note", own, self.token())
            sid = f"{sid} -> {branch}"
        elif self.fresh.get(sid):
            last = [m for m in self.world.db.get_messages(sid) if m["role"] == "user"][-1]
            self.world.db.rewind_to_message(sid, last["id"])
            user = max(i for i, s in enumerate(self.model.said) if s.session == sid and s.role == "user")
            for said in self.model.said[user:]:
                said.rewound = said.rewound or said.session == sid
            self.fresh[sid] = False
        else:
            return
        note(f"Hermes: {op} {sid}")

    # -- what the group and its admins do -------------------------------------------------------------
    @precondition(lambda self: len(self.model.said) > 4)
    @rule(op=st.sampled_from(["move", "optout", "optin", "off", "on"]), chat=st.sampled_from([G111, G444]),
          member=st.sampled_from(MEMBERS), project=st.sampled_from(["Alpha", "Alpha2"]))
    def group_acts(self, op: str, chat: str, member: str, project: str) -> None:
        if op == "move":
            r = self.client.post("/move", json={"chat": G111, "project": project}, headers=AUTH)
        elif op in ("optout", "optin"):
            r = self.client.put(f"/chats/{chat}/members/{member}/optout", json={"opted_out": op == "optout"},
                                headers=AUTH)
            if op == "optout" and chat == G444 and self.untold(chat):
                assert r.status_code == 403 and r.json()["code"] == "not_attributable", r.text
                note(f"/recall-optout {member} in {chat}: refused")
                return
        else:
            r = self.client.put(f"/chats/{chat}/recall", json={"enabled": op == "on"}, headers=AUTH)
            (self.model.off.discard if op == "on" else self.model.off.add)(chat)
        assert r.status_code == 200, r.text
        self.sync_spans()
        note(f"{op} {member if op.startswith('opt') else ''} {project if op == 'move' else chat}")

    def untold(self, chat: str) -> bool:
        """The group's newest turn cannot be told apart by member (no sender tag)."""
        users = [s for s in self.model.said if s.chat == chat and s.role == "user"]
        return bool(users) and users[-1].author == ""

    def sync_spans(self) -> None:
        """The spans as the store recorded them (their times are the server's)."""
        self.model.spans = []
        for rule_ in forgotten.load(self.home).rules:
            self.model.open_span(rule_.kind, rule_.chat, rule_.user_id, rule_.since)
            if rule_.until is not None:
                self.model.close_span(rule_.kind, rule_.chat, rule_.user_id, rule_.until)

    @rule(form=st.sampled_from(["all", "before", "after", "result", "chat", "session"]),
          chat=st.sampled_from([G111, G444]), member=st.sampled_from(MEMBERS), data=st.data())
    def forgets(self, form: str, chat: str, member: str, data) -> None:
        """Every form of /forget: a member's all / --after / --before / --result N (an admin's
        --member is the same request), an admin's --all --before and --session."""
        if chat in self.model.off:
            return
        said = [s for s in self.model.said if s.chat == chat and s.role == "user" and self.model.visible(s)]
        mine = [s for s in said if s.author == member]
        cut = self.cut_before(data.draw(st.sampled_from(said if form == "chat" else mine), label="cut")
                              ) if (mine or form == "chat" and said) else None
        if form == "result" and mine:
            turn = data.draw(st.sampled_from(mine), label="result")
            body, turns = ({"scope": "member", "user": member, "message_id": self.row_of(turn)},
                           self.model.with_answers([turn]))
        elif form == "chat" and cut is not None:
            body, turns = {"scope": "chat", "before": iso(cut)}, self.model.chat_turns(chat, cut)
        elif form == "session" and said:
            sid = data.draw(st.sampled_from(list(dict.fromkeys(s.session for s in said))), label="session")
            body, turns = {"scope": "session", "session_id": sid}, self.model.conversation_turns(sid)
        elif form in ("all", "before", "after"):
            after, before = (cut, None) if form == "after" else (None, cut) if form == "before" else (None, None)
            body = {"scope": "member", "user": member, **({"after": iso(after)} if after else {}),
                    **({"before": iso(before)} if before else {})}
            turns = self.model.members_turns(chat, member, after, before)
        else:
            return
        r = self.client.post("/forget", json={"chat": chat, "apply": True, **body}, headers=AUTH)
        assert r.status_code == 200, r.text
        self.model.forget(turns)
        note(f"/forget {body} in {chat}: {r.json()['messages']} row(s)")

    def cut_before(self, said: Said) -> float:
        """A time just before ``said`` and after every turn before it, far from both: the cut does
        not depend on how the clock's last digits round (``as_sent``)."""
        earlier = [s.when for s in self.model.said if s.when < said.when]
        return as_sent((max(earlier, default=said.when - 1.0) + said.when) / 2)

    def row_of(self, said: Said) -> int:
        conn = sqlite3.connect(f"file:{self.home / 'state.db'}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT id FROM messages WHERE session_id = ? AND content = ? ORDER BY id",
                                (said.session, said.text)).fetchone()[0]
        finally:
            conn.close()

    @precondition(lambda self: self.n > self.maintained + 3)  # something new since the last one
    @rule(op=st.sampled_from(["reindex", "restart"]))
    def maintenance(self, op: str) -> None:
        """``hermes recall index``, or a restart: nothing cached in memory survives."""
        if op == "reindex":
            from hermes_side.embedding import build_index, load_settings

            deadline = time.monotonic() + 60
            while (stats := build_index(self.home, load_settings(self.home))).status == "busy":
                assert time.monotonic() < deadline, stats.detail  # the server's own catch-up runs: wait
                time.sleep(0.2)
            assert stats.status == "done", stats.detail
        else:
            from hermes_side.search import engine as engine_mod
            from hermes_side.search import reader as reader_mod

            engine_mod._engines.clear()
            reader_mod._readers.clear()
            forgotten._cache.clear()
            try:
                from hermes_side.scope import rule_view
            except ImportError:  # pragma: no cover - the code before issue 34
                pass
            else:
                rule_view.forget_views()
            self.client = TestClient(create_app(self.home, KEY))
        self.maintained = self.n
        note(op)

    # -- the oracle ------------------------------------------------------------------------------------
    @invariant()
    def nothing_out_shows_and_nothing_else_is_lost(self) -> None:
        operator = self.model.operator_tokens()
        for chat in (G111, G444):
            shown = self.shown(chat)
            if shown is None:
                assert chat in self.model.off
                continue
            others = {s.token for s in self.model.said if s.chat not in (chat, None)} - {
                s.token for s in self.model.said if s.chat == chat}
            assert not shown & self.model.private(chat), f"out of recall but shown in {chat}"
            assert not shown & operator, f"the operator's notes shown in {chat}"
            assert not shown & others, f"another chat's words shown in {chat}"
            assert self.model.findable(chat) <= shown, f"lost from {chat}: {self.model.findable(chat) - shown}"
        self.at_rest()
        self.surfaces()
        self.operators_own()

    def operators_own(self) -> None:
        """The operator's notes stay findable by the operator: in the project their branch is in."""
        reader = reader_for(self.home)
        notes = {s.token: s.session for s in self.model.said if s.chat is None and not s.rewound}
        smap = reader.scope_map()
        for token, branch in notes.items():
            place = smap.place(branch) or {}
            assert place.get("kind") == "explicit", place
            assert token in self.shown_in(reader, reader.scope_for(project=place["id"])), f"{token} lost"

    def shown(self, chat: str) -> set[str] | None:
        """The tokens recall shows the chat: every row its scope may read, as a result shows it
        (quotes hidden) — the rows every surface (keyword, semantic, windows, API, tools) reads."""
        reader = reader_for(self.home)
        try:
            scope = reader.scope_for(chat=chat)
        except SearchError as exc:
            if exc.code == "recall_off":
                return None
            raise
        return self.shown_in(reader, scope)

    def shown_in(self, reader, scope) -> set[str]:
        with reader.leased() as conn:
            rows = conn.execute(f"SELECT m.id, m.session_id, m.content {MESSAGES_FROM} WHERE {eligible_sql(conn)}"
                                " AND m.session_id IN (SELECT value FROM json_each(?))",
                                (json.dumps(scope.session_ids),)).fetchall()
            texts = {r[0]: {"session_id": r[1], "text": message_text(r[2])} for r in rows}
            quotes.hide(conn, self.home, lambda: scope.smap, texts)
        words = " ".join(t["text"] for t in texts.values())
        return {s.token for s in self.model.said if s.token in words}

    def at_rest(self) -> None:
        path = self.home / "project-history-recall" / "embeddings.db"
        if not path.exists():
            return
        reader = reader_for(self.home)
        with reader.leased() as conn:
            out = {r[0] for r in conn.execute("SELECT id FROM temp.recall_forgotten")}
        indexed = indexed_ids(self.home)
        assert not out & indexed, f"vectors of turns out of recall still in embeddings.db: {sorted(out & indexed)}"

    def surfaces(self) -> None:
        """One search through the API and the agent's tool per chat, and the windows it opens."""
        for chat in (G111, G444):
            if chat in self.model.off:
                continue
            others = {s.token for s in self.model.said if s.chat not in (chat, None)} - {
                s.token for s in self.model.said if s.chat == chat}
            private = self.model.private(chat) | self.model.operator_tokens() | others
            said = [s for s in self.model.said if s.chat == chat]
            if not said:
                continue
            token = said[self.n % len(said)].token
            found = self.client.post("/search", json={"query": f"{token} plan", "chat": chat, "limit": 5},
                                     headers=AUTH).json()
            tool = call_tool_raw("project_history_search", {"query": f"{token} plan"},
                                 f"hermes-onebotv11+group+{chat.split(':')[1]}+19999")
            # A question naming the day the turns were said: every conversation held then is a row
            # (ranker.held_then), found by its first turn then, whatever it says. A day of this
            # machine's calendar, as search reads it (conversations.py) — named, or counted back from now.
            today = datetime.now().date()
            day_query = (f"weather on {today:%Y-%m-%d}", "今天我们聊了什么", "what did we say today?")[self.n % 3]
            by_day = self.client.post("/search", json={"query": day_query, "chat": chat,
                                                       "mode": "keyword", "limit": 5}, headers=AUTH).json()
            if self.model.findable(chat) and all(datetime.fromtimestamp(s.when).date() == today for s in said):
                assert by_day["results"], f"nothing held today shown in {chat}: {by_day}"
            tool_day = call_tool_raw("project_history_search", {"query": day_query},
                                     f"hermes-onebotv11+group+{chat.split(':')[1]}+19999")
            seen = json.dumps(found) + tool + json.dumps(by_day) + tool_day
            for hit in found.get("results", [])[:2]:
                seen += self.client.post("/context", json={"chat": chat, "message_id": hit["message_id"]},
                                         headers=AUTH).text
            leaked = {t for t in private if t in seen}
            assert not leaked, f"shown by a surface in {chat}: {sorted(leaked)}"
            if token in self.model.findable(chat):
                kw = self.client.post("/search", json={"query": token, "chat": chat, "mode": "keyword"},
                                      headers=AUTH).text
                assert token in kw, f"{token} lost from the keyword search of {chat}"


RecallRules.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
    print_blob=True, suppress_health_check=list(HealthCheck),
    verbosity=Verbosity.verbose if os.environ.get("RECALL_STATEFUL_VERBOSE") else Verbosity.normal)
seed(SEED)(RecallRules)  # run_state_machine_as_test takes the machine's seed
TestRecallRules = RecallRules.TestCase
