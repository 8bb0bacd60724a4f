"""deja-vu (github vshulcz/deja-vu, MIT), the closest open-source peer, over a benchmark's Hermes home.

Installed from the npm registry into ``.cache/deja-vu`` (never committed)::

    npm install --prefix .cache/deja-vu @vshulcz/deja-vu-linux-amd64

deja-vu reads Hermes' ``state.db`` itself (``role IN ('user','assistant')`` rows with text), groups
sessions into projects by their cwd (``work/<conv>`` here) and ranks sessions lexically; we ask
``deja search --json --project work/<conv> <question>``, as a user scoped to that project would. Its
index and home live in a throw-away folder beside the bench home (``HOME``, ``DEJA_INDEX_DIR``), with
no network and no embedder (``DEJA_OFFLINE``, ``DEJA_EMBED_OFF``), so nothing of the machine's own
history is read or written. A hit is a session with the messages it shows; they are mapped back
to message ids by their text. Chat sessions (the NoneBot bridge's) have no cwd, so deja-vu cannot
scope them to a project: there it is asked unscoped for 50 hits and the project's own are kept.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from benchmarks.worlds.locomo import Corpus

PACKAGE = "@vshulcz/deja-vu-linux-amd64"
DEFAULT_PREFIX = Path(__file__).resolve().parents[1] / ".cache" / "deja-vu"
INSTALL_HINT = f"npm install --prefix {DEFAULT_PREFIX} {PACKAGE}"
LIMIT = 5
UNSCOPED_LIMIT = 50  # hits asked for where deja-vu cannot scope (chat sessions), the project's kept
_KEY_CHARS = 60  # deja-vu trims and caps message text; the start of a message is enough to know it


def find_binary(explicit: Path | None = None) -> Path | None:
    """The ``deja`` binary: ``--deja``, then the npm cache folder, then PATH."""
    candidates = [explicit] if explicit else []
    candidates.append(DEFAULT_PREFIX / "node_modules" / PACKAGE / "bin" / "deja")
    if on_path := shutil.which("deja"):
        candidates.append(Path(on_path))
    return next((c for c in candidates if c and c.is_file() and os.access(c, os.X_OK)), None)


def version(binary: Path) -> str:
    return subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()


def _key(text: str) -> str:
    return " ".join(str(text).split())[:_KEY_CHARS]


class DejaVu:
    def __init__(self, binary: Path, corpus: Corpus) -> None:
        self.binary = binary
        self.corpus = corpus
        root = corpus.home / "deja"
        shutil.rmtree(root, ignore_errors=True)  # its index follows state.db; rebuilt each run (~1 s)
        (root / "home").mkdir(parents=True)
        self.env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root / "home"),
                    "DEJA_HERMES_HOME": str(corpus.home), "DEJA_INDEX_DIR": str(root / "index"),
                    "DEJA_OFFLINE": "1", "DEJA_EMBED_OFF": "1"}
        out = subprocess.run([str(binary), "index"], env=self.env, capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise RuntimeError(f"deja index failed: {out.stderr.strip()[-500:]}")
        self._sessions: dict[str, set[str]] = {}
        self.message_of: dict[tuple[str, str], int] = {}
        from hermes_side.stores.hermes_db import connect_ro  # noqa: PLC0415

        conn = connect_ro(corpus.state_db)
        try:
            for mid, sid, content in conn.execute(
                    "SELECT id, session_id, content FROM messages WHERE role IN ('user', 'assistant')"
                    " AND content IS NOT NULL AND content != '' ORDER BY id"):
                self.message_of.setdefault((sid, _key(content)), int(mid))
        finally:
            conn.close()

    def project(self, conv: str) -> str | None:
        """deja-vu's project of ``conv``: its folder. A chat's sessions have no cwd, so deja-vu cannot
        scope them: None, and ``search`` asks unscoped and keeps the project's own sessions."""
        folder = self.corpus.folders.get(conv)
        return f"{folder.parent.name}/{folder.name}" if folder is not None else None

    def search(self, question: str, conv: str) -> list[tuple[str, list[int]]]:
        """(session id, message ids it shows) per hit, best first."""
        project = self.project(conv)
        scope = ["--limit", str(LIMIT), "--project", project] if project else ["--limit", str(UNSCOPED_LIMIT)]
        cmd = [str(self.binary), "search", "--json", *scope, "--", question]
        out = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=120)
        if out.returncode != 0 and not out.stdout.strip():
            return []  # deja exits non-zero when nothing matches
        hits = json.loads(out.stdout or "{}").get("hits") or []
        rows = []
        for hit in hits:
            session = hit.get("session") or {}
            sid = session.get("id", "")
            mids = [m for msg in session.get("messages") or []
                    if (m := self.message_of.get((sid, _key(msg.get("text", ""))))) is not None]
            rows.append((sid, list(dict.fromkeys(mids))))
        if project is None:
            mine = self.sessions_of(conv)
            rows = [r for r in rows if r[0] in mine][:LIMIT]
        return rows

    def sessions_of(self, conv: str) -> set[str]:
        if conv not in self._sessions:
            self._sessions[conv] = {t.session_id for t in self.corpus.by_message.values() if t.conv == conv}
        return self._sessions[conv]
