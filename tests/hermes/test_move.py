"""``project_session_move``: the whole conversation moves, and the next search follows it.

Moves go through Hermes' real tool pipeline; the conversation is identified only by the handler's
``session_id`` kwarg; state.db is written by Hermes' own ``SessionDB.update_session_cwd``.
"""

from __future__ import annotations

import pytest

from tests.hermes import hermes_line
from tests.hermes.world import call_tool, git


def move(sid: str, project_id: str) -> dict:
    return call_tool("project_session_move", {"project_id": project_id}, sid)


def search(sid: str, query: str) -> dict:
    return call_tool("project_history_search", {"query": query, "mode": "keyword", "limit": 10}, sid)


def hit_ids(out: dict) -> list[str]:
    return sorted(r["session_id"] for r in out["results"])


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    """The user's home directory (Home's cwd when config.yaml sets no terminal.cwd)."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def two_projects(world, loaded_plugin, user_home):
    """Project A is a git repo, project B a plain notes folder; each has one past conversation."""
    world.repo_a = world.repo("repoA")
    world.notes = world.folder("notes")
    world.pid_a = world.project("RepoA", world.repo_a)
    world.pid_b = world.project("Notes", world.notes)
    world.in_a = world.session("kestrel plan made in A", cwd=world.repo_a, git_root=world.repo_a)
    world.in_b = world.session("kestrel plan made in B", cwd=world.notes)
    return world


class TestMoveWholeConversation:
    def test_every_session_of_the_lineage_moves_to_the_primary_folder(self, two_projects):
        w = two_projects
        root = w.session("start", cwd=w.repo_a, git_root=w.repo_a)
        mid = w.compress(root, "middle")
        tip = w.compress(mid, "tip")

        out = move(tip, w.pid_b)

        assert out["success"] is True
        assert out["project"]["id"] == w.pid_b and out["cwd"] == str(w.notes)
        assert out["message"] == f"Moved to project Notes, cwd now {w.notes}"
        for sid in (root, mid, tip):
            assert w.db.get_session(sid)["cwd"] == str(w.notes), sid

    def test_moving_from_the_root_moves_the_children_too(self, two_projects):
        w = two_projects
        root = w.session("start", cwd=w.repo_a)
        child = w.compress(root, "continued")

        assert move(root, w.pid_b)["success"] is True

        assert w.db.get_session(child)["cwd"] == str(w.notes)

    def test_other_conversations_stay_where_they_are(self, two_projects):
        w = two_projects
        cur = w.session("hello", cwd=w.repo_a)

        move(cur, w.pid_b)

        assert w.db.get_session(w.in_a)["cwd"] == str(w.repo_a)
        assert w.db.get_session(w.in_b)["cwd"] == str(w.notes)

    def test_moving_a_branch_leaves_the_conversation_it_branched_from(self, two_projects):
        w = two_projects
        parent = w.session("original line of work", cwd=w.repo_a, git_root=w.repo_a)
        w.db.end_session(parent, "branched")
        branch = w.session("branched line", parent=parent, model_config={"_branched_from": parent})

        out = move(branch, w.pid_b)

        assert out["moved_sessions"] == 1
        assert w.db.get_session(branch)["cwd"] == str(w.notes)
        assert w.db.get_session(parent)["cwd"] == str(w.repo_a)

    def test_move_by_slug(self, two_projects):
        w = two_projects
        cur = w.session("hello", cwd=w.repo_a)

        out = move(cur, "notes")

        assert out["success"] is True and out["project"]["id"] == w.pid_b
        assert w.db.get_session(cur)["cwd"] == str(w.notes)

    def test_writes_go_through_hermes_update_session_cwd(self, two_projects, monkeypatch):
        from hermes_state import SessionDB

        w = two_projects
        root = w.session("start", cwd=w.repo_a)
        tip = w.compress(root, "tip")
        calls = []
        real = SessionDB.update_session_cwd

        def spy(self, session_id, cwd, *args, **kwargs):
            calls.append((session_id, cwd))
            return real(self, session_id, cwd, *args, **kwargs)

        monkeypatch.setattr(SessionDB, "update_session_cwd", spy)

        move(tip, w.pid_b)

        assert sorted(calls) == sorted([(root, str(w.notes)), (tip, str(w.notes))])


class TestGitProbeOfTheTarget:
    def test_branch_and_common_repo_root_of_a_worktree_target(self, world, loaded_plugin):
        repo = world.repo("repoA")
        wt = world.worktree(repo, "repoA-feat", "feat")
        pid = world.project("Feature", wt)
        cur = world.session("hello", cwd=world.folder("elsewhere"))

        assert move(cur, pid)["success"] is True

        row = world.db.get_session(cur)
        assert row["cwd"] == str(wt)
        assert row["git_branch"] == "feat"
        assert row["git_repo_root"] == str(repo)  # the main repo, not the worktree

    def test_branch_of_a_repo_target(self, world, loaded_plugin):
        repo = world.repo("repoB")
        git("checkout", "-q", "-b", "release", cwd=repo)
        pid = world.project("B", repo)
        cur = world.session("hello", cwd=world.folder("elsewhere"))

        move(cur, pid)

        row = world.db.get_session(cur)
        assert (row["git_branch"], row["git_repo_root"]) == ("release", str(repo))


class TestNextSearchUsesTheNewPlace:
    def test_repo_to_plain_folder_despite_the_stale_git_root(self, two_projects):
        w = two_projects
        cur = w.session("hello", cwd=w.repo_a, git_root=w.repo_a)
        assert hit_ids(search(cur, "kestrel")) == [w.in_a]

        out = move(cur, w.pid_b)

        assert out["success"] is True
        # Hermes 0.19.0 cannot clear the old root and the plugin must ignore it; a Hermes whose
        # update_session_cwd clears or replaces git metadata (0.22) leaves none — detected.
        from hermes_side.host import features

        clears = hermes_line.update_cwd_clears_git_root() or features.optional_features()["replace_git_meta"]
        assert w.db.get_session(cur)["git_repo_root"] == (None if clears else str(w.repo_a))
        after = search(cur, "kestrel")
        assert after["project"]["id"] == w.pid_b
        assert hit_ids(after) == [w.in_b]

    def test_rotated_lineage_searches_the_new_project(self, two_projects):
        w = two_projects
        root = w.session("start", cwd=w.repo_a, git_root=w.repo_a)
        tip = w.compress(root, "tip")
        assert search(tip, "kestrel")["project"]["id"] == w.pid_a

        move(tip, w.pid_b)

        assert hit_ids(search(tip, "kestrel")) == [w.in_b]

    def test_to_home(self, two_projects, user_home):
        w = two_projects
        other_home = w.session("kestrel grocery list", cwd=user_home)
        cur = w.session("hello", cwd=w.repo_a, git_root=w.repo_a)

        out = move(cur, "")

        assert out["success"] is True and out["project"] == {"kind": "home"}
        assert out["cwd"] == str(user_home) and w.db.get_session(cur)["cwd"] == str(user_home)
        after = search(cur, "kestrel")
        assert after["project"] == {"kind": "home"}
        assert hit_ids(after) == [other_home]

    def test_to_home_uses_the_configured_terminal_cwd(self, two_projects, tmp_path):
        import json

        w = two_projects
        desk = tmp_path / "desk"
        desk.mkdir()
        cfg = json.loads((w.home / "config.yaml").read_text())
        (w.home / "config.yaml").write_text(json.dumps({**cfg, "terminal": {"cwd": str(desk)}}))
        cur = w.session("hello", cwd=w.repo_a)

        out = move(cur, "")

        assert out["cwd"] == str(desk) and w.db.get_session(cur)["cwd"] == str(desk)

    @pytest.mark.parametrize("where", ["notes/daily", "repoA/src"])
    def test_to_home_never_lands_in_a_project(self, two_projects, user_home, where):
        import json

        w = two_projects
        configured = w.folder(where)  # inside project Notes / inside repo A
        cfg = json.loads((w.home / "config.yaml").read_text())
        (w.home / "config.yaml").write_text(json.dumps({**cfg, "terminal": {"cwd": str(configured)}}))
        cur = w.session("hello", cwd=w.notes)

        out = move(cur, "")

        assert out["success"] is True and out["project"] == {"kind": "home"}
        assert search(cur, "kestrel")["project"] == {"kind": "home"}

    def test_back_from_home_into_a_project(self, two_projects):
        w = two_projects
        cur = w.session("hello", cwd=w.notes)
        move(cur, "")

        move(cur, w.pid_a)

        assert hit_ids(search(cur, "kestrel")) == [w.in_a]

    def test_the_other_project_no_longer_sees_the_moved_conversation(self, two_projects):
        w = two_projects
        moved = w.session("kestrel thoughts that belong in notes", cwd=w.repo_a)
        assert moved in hit_ids(search(w.in_a, "kestrel"))

        move(moved, w.pid_b)

        assert moved not in hit_ids(search(w.in_a, "kestrel"))
        assert moved in hit_ids(search(w.in_b, "kestrel"))

    def test_a_move_made_by_hermes_itself_is_seen_by_the_next_search(self, world, loaded_plugin):
        a, b = world.folder("aaa/src"), world.folder("bbb/src")
        world.project("A", a)
        pid_b = world.project("B", b)
        world.session("kestrel in A", cwd=a)
        in_b = world.session("kestrel in B", cwd=b)
        cur = world.session("hello", cwd=a)
        for _ in range(2):  # the scope cache is built and settled
            assert search(cur, "kestrel")["project"]["name"] == "A"

        world.db.update_session_cwd(cur, str(b))  # what tui_gateway's project switch does

        after = search(cur, "kestrel")
        assert after["project"].get("id") == pid_b
        assert hit_ids(after) == [in_b]
