"""What each method of the LoCoMo benchmark shows for one question (``View``): Hermes' own search,
the plain baselines, deja-vu and the plugin's three modes, all over the same home."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmarks.worlds.locomo import Corpus, Question

PLUGIN_MODES = ("keyword", "semantic", "hybrid")
LIMIT = 5  # the tool's limit in every suite, as the issue measures


@dataclass
class View:
    """What one method returns for one question: ranked messages (for recall@k, may be empty when not
    needed) and what the user is shown (one row per conversation for the tool, messages otherwise)."""
    ranked: list[tuple[int, str]]
    shown: list[tuple[int, str]]
    grouped: list[tuple[int, str]]  # best message of each of the first sessions
    quiet: bool = False  # empty, or every shown row has relevance "low"
    answers: dict[int, set[int]] = field(default_factory=dict)  # row message → other messages shown in its row
    scores: list[float] = field(default_factory=list)  # each row's relevance score (ours)


def _grouped(ranked: list[tuple[int, str]]) -> list[tuple[int, str]]:
    seen: dict[str, int] = {}
    for mid, sid in ranked:
        seen.setdefault(sid, mid)
    return [(mid, sid) for sid, mid in seen.items()]


def in_conversations(view: Callable[[Question, str, bool], View], conversation_of: dict[int, str],
                     plain: bool) -> Callable[[Question, str, bool], View]:
    """``view`` scored by conversation where a world's conversations are not its sessions (one bridge
    session for the whole history: ``ChatCorpus.conversation_of``). A plain method's messages are
    grouped by the true conversations — the scenes or days, which no method is told — and a row of
    ours or deja-vu's counts for the conversation its message was said in."""
    def conversation(q: Question, conv: str, need_ranked: bool) -> View:
        v = view(q, conv, need_ranked)
        of = [(mid, conversation_of.get(mid, sid)) for mid, sid in (v.ranked if plain else v.grouped)]
        return replace(v, grouped=(_grouped(of) if plain else of)[:LIMIT])
    return conversation


def baseline_method(rank: Callable[[str, str], list[tuple[int, str]]]) -> Callable[[Question, str, bool], View]:
    def view(q: Question, conv: str, need_ranked: bool) -> View:
        ranked = rank(q.question, conv)
        return View(ranked, ranked[:LIMIT], _grouped(ranked)[:LIMIT], quiet=not ranked)
    return view


def hermes_method(corpus: Corpus):
    from hermes_state import SessionDB  # noqa: PLC0415

    db = SessionDB(db_path=corpus.state_db)

    def rank(question: str, conv: str) -> list[tuple[int, str]]:
        return [(int(r["id"]), r["session_id"]) for r in db.search_messages(question, limit=10)]

    return baseline_method(rank), db.close


def plugin_method(engine, corpus: Corpus, mode: str, status: dict[str, int], recall_at_k: bool = True):
    from hermes_side.search.request import SearchRequest  # noqa: PLC0415

    def view(q: Question, conv: str, need_ranked: bool) -> View:
        project = corpus.projects[conv]
        ranked = []
        if need_ranked and recall_at_k:
            ranked = [(int(r["message_id"]), r["session_id"])
                      for r in engine.rank_messages(q.question, mode=mode, project=project, limit=10)]
        out = engine.search(SearchRequest(query=q.question, mode=mode, limit=LIMIT), project=project)
        if out.get("semantic_status"):
            status[out["semantic_status"]] = status.get(out["semantic_status"], 0) + 1
        rows = out.get("results") or []
        # A row shows its message and, when that message asks something, the reply that answered
        # it (snippet "question → answer"): both count as shown, at the row's rank.
        shown = [(int(r["message_id"]), r["session_id"]) for r in rows]
        # Likewise the other top messages of the conversation the row lists under "more".
        answers = {int(r["message_id"]): {int(x["message_id"]) for x in [r.get("answer") or {}, *(r.get("more") or [])]
                                          if x} for r in rows}
        quiet = all((r.get("relevance") or {}).get("level") == "low" for r in rows)
        return View(ranked, shown, shown, quiet, answers, [(r.get("relevance") or {}).get("score", 0.0) for r in rows])

    return view



def deja_method(corpus: Corpus, binary: Path | None):
    """deja-vu over the same Hermes home, one ``deja search --project`` per question; None when the
    binary is missing (the report says so)."""
    if binary is None:
        return None
    from benchmarks.deja import DejaVu  # noqa: PLC0415

    deja = DejaVu(binary, corpus)

    def view(q: Question, conv: str, need_ranked: bool) -> View:
        rows = deja.search(q.question, conv)  # [(session id, [message ids shown])], best first
        # a row counts what ours can show in one: its message and three more (answer + two "more")
        shown = [(mids[0], sid) for sid, mids in rows if mids]
        answers = {mids[0]: set(mids[1:4]) for sid, mids in rows if mids}
        ranked = [(m, sid) for sid, mids in rows for m in mids]
        return View(ranked, shown[:LIMIT], shown[:LIMIT], quiet=not rows, answers=answers)

    return view

