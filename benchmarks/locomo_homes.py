"""The LoCoMo benchmark's Hermes homes: built once per world, cached while the data and the loader
are unchanged, and their embedding index brought up to date incrementally."""

from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.worlds import locomo, locomo_agent, locomo_zh
from benchmarks.worlds.locomo import Corpus
from hermes_side.embedding.store import STORE_FILE

DEFAULT_CACHE = Path(__file__).resolve().parent / "out" / "homes"


def loader_fingerprint(*paths: Path, worlds: tuple = (locomo, locomo_agent, locomo_zh)) -> str:
    """The key of a home: the world loaders' code (``worlds``: modules) and the data files it read."""
    h = hashlib.sha256()
    for world in worlds:  # the loader: a change to it builds the homes anew
        h.update(Path(world.__file__).read_bytes())
    for p in paths:
        for f in sorted(p.glob("*")) if p.is_dir() else [p]:
            if f.is_file():
                h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def cached_corpus(home: Path, key: str, load: Callable[[Path], Corpus]) -> tuple[Corpus, bool]:
    """The corpus of ``home`` if it was built from the same data and loader, else a fresh build.

    A fresh build whose messages are the same as the old home's (same ids, sessions, roles, text
    — ``content_digest``) keeps the old home's embedding index and plain e5 vectors: a change to the
    loader that does not change what this world stores costs no re-embedding."""
    saved = home / "corpus.pickle"
    if saved.exists() and (home / "corpus.key").read_text() == key:
        os.environ["HERMES_HOME"] = str(home.resolve())
        with saved.open("rb") as f:
            return pickle.load(f), True
    old = home.with_name(home.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if home.exists():
        home.rename(old)
    corpus = load(home)
    digest = content_digest(corpus.state_db)
    if old.exists() and (old / "content.key").exists() and (old / "content.key").read_text() == digest:
        # The old index's files, not its plugin folder: the fresh load may have written that folder
        # already (a chat world's bindings), and moving a folder onto one nests it a level down.
        kept = [(old / "plain_e5.npz", home / "plain_e5.npz")]
        plugin = "project-history-recall"
        kept += [(f, home / plugin / f.name) for f in (old / plugin).glob(STORE_FILE + "*")]
        for src, dst in kept:
            if src.exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.unlink(missing_ok=True)
                shutil.move(str(src), str(dst))
        print(f"  {home.name}: same messages as before, embedding index kept", flush=True)
    if old.exists():
        shutil.rmtree(old)
    with saved.open("wb") as f:
        pickle.dump(corpus, f)
    (home / "corpus.key").write_text(key)
    (home / "content.key").write_text(digest)
    return corpus, False


def content_digest(state_db: Path) -> str:
    """What the embedding index depends on: every message's id, session, role, state and text."""
    from hermes_side.stores.hermes_db import connect_ro  # noqa: PLC0415

    h = hashlib.sha256()
    conn = connect_ro(state_db)
    try:
        for row in conn.execute("SELECT id, session_id, role, active, compacted, content, tool_calls"
                                " FROM messages ORDER BY id"):
            h.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
    finally:
        conn.close()
    return h.hexdigest()


def build_embedding_index(home: Path) -> dict:
    """``build_index`` with the home's settings (the local model), as ``hermes recall index`` runs it;
    incremental, so a reused home only embeds chunks whose text changed."""
    from hermes_side.embedding import build_index, load_settings  # noqa: PLC0415

    os.environ["HERMES_HOME"] = str(home.resolve())
    last = [time.perf_counter()]

    def progress(p) -> None:
        if time.perf_counter() - last[0] >= 15:
            last[0] = time.perf_counter()
            print(f"  indexing {home.name}: {p.messages_done}/{p.messages_total or '?'} messages,"
                  f" {p.chunks_embedded} chunks embedded", flush=True)

    kwargs = {"progress": progress} if "progress" in inspect.signature(build_index).parameters else {}
    t0 = time.perf_counter()
    stats = build_index(home, load_settings(home), **kwargs)
    waited = 0
    while stats.status == "busy" and waited < 600:  # a search's background catch-up of this home, still running
        time.sleep(2)
        waited += 2
        stats = build_index(home, load_settings(home), **kwargs)
    if stats.status != "done":
        raise RuntimeError(f"embedding index build did not finish: {stats}")
    return {"seconds": round(time.perf_counter() - t0, 1), "embedded": stats.chunks_embedded,
            "skipped": stats.chunks_skipped, "deleted": stats.chunks_deleted}

