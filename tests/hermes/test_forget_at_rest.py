"""Issue 39 §5: a forget's data at rest goes with its receipt — on real files, a real process killed
with SIGKILL in the middle of a forget, and a real index run that a forget lands in the middle of.

The rule lives in forgotten.db and the vectors in embeddings.db (two WAL files: no shared
transaction), so a receipt is done only once the vectors are gone; a forget killed in between is
finished by the next server start, forget or index run (``embedding/forgetting.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from hermes_side.stores import bindings, forgotten
from tests.hermes.world import indexed_ids

KEY = "forget-at-rest-key-0123456789"
G111 = "onebotv11:111"
S2 = "hermes-onebotv11+group+111+10002"
S3 = "hermes-onebotv11+group+111+10003"
SECRET = "my staging launch password is marmalade-seven"


@pytest.fixture
def indexed(world, loaded_plugin):
    from hermes_side.embedding import build_index, load_settings

    alpha = world.folder("alpha")
    bindings.set_binding(world.home, G111, world.project("Alpha", alpha))
    world.session(("user", SECRET), ("assistant", "Noted marmalade-seven."), source="api_server", sid=S2, cwd=alpha)
    world.session(("user", "the standup moves to ten"), ("assistant", "Ten it is."), source="api_server", sid=S3,
                  cwd=alpha)
    build_index(world.home, load_settings(world.home))
    world.secret_ids = {m["id"] for m in world.db.get_messages(S2)}
    assert world.secret_ids <= indexed_ids(world.home)
    return world


# Runs a member's forget in a process of its own and SIGKILLs it the moment it opens embeddings.db
# to delete the vectors: after the rule, before the vectors.
KILLED_FORGET = textwrap.dedent("""
    import os, signal, sqlite3, sys
    from pathlib import Path
    real = sqlite3.connect
    def connect(path, *args, **kwargs):
        if str(path).endswith("embeddings.db"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, *args, **kwargs)
    sqlite3.connect = connect
    from hermes_side.actions import forget
    home = Path(sys.argv[1])
    plan = forget.plan_member(home, "onebotv11:111", "10002")
    forget.apply(home, plan, actor="onebotv11:10002", surface="api")
""")


def test_a_forget_killed_before_its_vectors_went_is_finished_by_the_next_server_start(indexed):
    world = indexed
    done = subprocess.run([sys.executable, "-c", KILLED_FORGET, str(world.home)], env=dict(os.environ),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr  # killed, as kill -9 would
    (receipt,) = [r for r in forgotten.audit_log(world.home) if r["action"] == "forget"]
    assert world.secret_ids <= indexed_ids(world.home)

    with TestClient(create_app(world.home, KEY)) as client:  # the server starts again
        found = client.post("/search", json={"query": "marmalade", "chat": G111, "mode": "hybrid"},
                            headers={"Authorization": f"Bearer {KEY}"}).json()

    assert not world.secret_ids & indexed_ids(world.home)
    assert "marmalade" not in json.dumps(found)
    # Until then the log did not call the receipt done: the vectors were still there.
    assert receipt.get("index_pending") == 1 and forgotten.audit_log(world.home)[0]["index_pending"] == 0


def test_a_forget_that_lands_while_a_batch_is_embedded_leaves_no_vector_behind(indexed):
    """The index run read the rows before the forget and writes their vectors after its purge."""
    from hermes_side.actions import forget
    from hermes_side.embedding import build_index, load_settings, make_embedder

    world = indexed
    world.db.append_message(S2, "user", "and the backup password is quince-three")
    late = world.db.get_messages(S2)[-1]["id"]
    settings = load_settings(world.home)
    embedder = make_embedder(world.home, settings)
    embed = embedder.embed_passages

    def forget_meanwhile(texts):
        vectors = embed(texts)
        forget.apply(world.home, forget.plan_member(world.home, G111, "10002"), actor="onebotv11:10002", surface="api")
        return vectors

    embedder.embed_passages = forget_meanwhile
    build_index(world.home, settings, embedder=embedder)

    assert late not in indexed_ids(world.home) and not world.secret_ids & indexed_ids(world.home)
    assert all(r["index_pending"] == 0 for r in forgotten.audit_log(world.home))
