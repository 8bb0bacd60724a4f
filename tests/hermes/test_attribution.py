"""Attribution: which project a session belongs to (seed §3.1 + the architecture's corrections).

The pure ``resolve_project(session_row, projects)`` is tested table-driven, including Windows
spellings read on any host. The corrections the real system needs — lineage inheritance, stale
git roots, and repo roots that only git knows (linked worktrees) — are tested both on the pure
functions and end to end through the real plugin over a real state.db and real git repos.
"""

from __future__ import annotations

import pytest

from hermes_side.scope.attribution import effective_place, resolve_project
from hermes_side.scope.lineage import conversation_root
from tests.hermes import hermes_line
from tests.hermes.world import call_tool


def project(pid: str, *folders: str, archived: bool = False) -> dict:
    """A project as ``projects_db.Project.to_dict()`` shapes it."""
    return {"id": pid, "name": pid.upper(), "slug": pid, "archived": archived,
            "primary_path": folders[0] if folders else None,
            "folders": [{"path": f, "label": None, "is_primary": i == 0, "added_at": 0}
                        for i, f in enumerate(folders)]}


def explicit(pid: str) -> dict:
    return {"kind": "explicit", "id": pid, "name": pid.upper()}


HOME = {"kind": "home"}


class TestThreeStates:
    def test_cwd_inside_a_project_folder_is_explicit(self):
        got = resolve_project({"cwd": "/work/hermes/src"}, [project("p_h", "/work/hermes")])
        assert got == explicit("p_h")

    def test_repo_without_a_project_is_an_auto_project_keyed_by_its_root(self):
        got = resolve_project({"cwd": "/work/tool/lib", "git_repo_root": "/work/tool"}, [])
        assert got["kind"] == "auto"
        # Same key rule as Hermes' project_tree._path_key: separators joined, leading "/" dropped.
        assert got["key"] == "work/tool"

    def test_no_cwd_and_no_root_is_home(self):
        assert resolve_project({"cwd": None, "git_repo_root": None}, [project("p_h", "/work/h")]) == HOME

    def test_plain_folder_outside_every_project_and_repo_is_home(self):
        assert resolve_project({"cwd": "/tmp/scratch"}, [project("p_h", "/work/h")]) == HOME

    def test_a_recorded_root_alone_attributes_a_session_without_cwd(self):
        got = resolve_project({"cwd": None, "git_repo_root": "/work/hermes"}, [project("p_h", "/work/hermes")])
        assert got == explicit("p_h")

    def test_explicit_project_beats_the_auto_repo_it_contains(self):
        got = resolve_project({"cwd": "/work/mono/tool", "git_repo_root": "/work/mono/tool"},
                              [project("p_mono", "/work/mono")])
        assert got == explicit("p_mono")


# (project folder, session cwd, attributed?) — the spellings a state.db written on Windows or by
# hand contains. Windows-looking paths compare case-insensitively on every host; POSIX stays
# case-sensitive; separators and trailing slashes never matter; a prefix is not an ancestor.
PATH_SPELLINGS = [
    pytest.param(r"C:\Users\Bob\Repo", "c:/users/bob/repo/", True, id="windows-case-and-separators"),
    pytest.param(r"C:\Users\Bob\Repo", r"C:\USERS\bob\Repo\src\app", True, id="windows-descendant"),
    pytest.param("c:/users/bob/repo/", r"C:\Users\Bob\Repo", True, id="windows-folder-with-trailing-slash"),
    pytest.param(r"C:\Users\Bob\Repo", r"C:\Users\Bob\Repo2", False, id="windows-prefix-is-not-ancestor"),
    pytest.param(r"C:\Users\Bob\Repo", r"D:\Users\Bob\Repo", False, id="windows-other-drive"),
    pytest.param(r"\\srv\share", r"\\SRV\Share\team\notes", True, id="unc-case-insensitive"),
    # A POSIX path, as Linux resolves it (issue 35): "//srv/share" is "/srv/share", not a UNC share.
    pytest.param(r"\\srv\share\proj", "//srv/share/proj/sub", False, id="posix-double-slash-is-not-unc"),
    pytest.param(r"\\srv\share", r"\\srv\share2", False, id="unc-prefix-is-not-ancestor"),
    pytest.param("/Users/Bob", "/users/bob", False, id="posix-is-case-sensitive"),
    pytest.param("/Users/Bob", "/Users/Bob/code", True, id="posix-descendant"),
    pytest.param("/work/repo/", "/work/repo", True, id="posix-folder-trailing-slash"),
    pytest.param("/work/repo", "/work/repo///", True, id="posix-cwd-trailing-slashes"),
    pytest.param("/work/repo", "/work/repo2", False, id="posix-prefix-is-not-ancestor"),
    pytest.param("/work/repo", "/work/repo-old/x", False, id="posix-prefix-with-dash"),
    pytest.param("/work/repo", "/work", False, id="posix-parent-is-not-inside"),
    # Look-alikes (issue 35): what the operating system resolves the spelling to decides.
    pytest.param("/work/alpha", "/work/alpha/../vault", False, id="posix-dotdot-leaves-the-folder"),
    pytest.param("/work/alpha", "/work/vault/../alpha/src", True, id="posix-dotdot-into-the-folder"),
    pytest.param("/work/alpha", "/work/./alpha//src/.", True, id="posix-dot-and-double-slashes"),
    pytest.param("/work/alpha", "//work/ALPHA", False, id="posix-double-slash-keeps-case"),
    pytest.param("/work/alpha", "//work/alpha/x", True, id="posix-double-slash-is-root"),
    pytest.param("/work/alpha", "work/alpha", False, id="relative-path-names-no-folder"),
    pytest.param("/work/alpha", "/work\\alpha", False, id="posix-backslash-is-part-of-a-name"),
    pytest.param("/work/alpha", "/work/alpha ", False, id="posix-trailing-space-is-part-of-a-name"),
    pytest.param(r"C:\Users\Bob\Repo", r"C:\Users\Bob\Other\..\Repo\src", True, id="windows-dotdot-into"),
    pytest.param(r"C:\Users\Bob\Repo", r"c:\users\bob\repo\..\vault", False, id="windows-dotdot-leaves"),
    pytest.param(r"\\srv\share\proj", r"\\SRV\share\..\..\proj", True, id="unc-dotdot-stops-at-the-share"),
    pytest.param(r"C:\Users\Bob\Repo", "/c:/users/bob/repo", False, id="posix-spelling-never-matches-windows"),
    pytest.param(r"C:\Users\Bob", r"\Users\Bob", False, id="root-relative-names-no-folder"),
    pytest.param(r"C:\Users\Bob", "C:Users\\Bob", False, id="drive-relative-names-no-folder"),
]


class TestPathSpellings:
    @pytest.mark.parametrize(("folder", "cwd", "attributed"), PATH_SPELLINGS)
    def test_folder_match(self, folder, cwd, attributed):
        got = resolve_project({"cwd": cwd}, [project("p_x", folder)])
        assert got == (explicit("p_x") if attributed else HOME)

    @pytest.mark.parametrize(("root", "key"), [
        (r"C:\Users\Bob\Repo", "c:/users/bob/repo"),
        ("c:/users/bob/repo/", "c:/users/bob/repo"),
        (r"\\srv\share\Repo", "srv/share/repo"),
        ("/Users/Bob/Repo/", "Users/Bob/Repo"),
    ])
    def test_auto_key_is_the_same_for_every_spelling_of_one_root(self, root, key):
        got = resolve_project({"cwd": None, "git_repo_root": root}, [])
        assert got["kind"] == "auto" and got["key"] == key

    def test_two_windows_spellings_of_one_repo_are_one_auto_project(self):
        a = resolve_project({"cwd": r"C:\Code\Tool\src", "git_repo_root": r"C:\Code\Tool"}, [])
        b = resolve_project({"cwd": "c:/code/tool", "git_repo_root": "c:/code/tool/"}, [])
        assert a["key"] == b["key"]

    def test_two_posix_spellings_differing_in_case_are_two_auto_projects(self):
        a = resolve_project({"cwd": "/Code/Tool", "git_repo_root": "/Code/Tool"}, [])
        b = resolve_project({"cwd": "/code/tool", "git_repo_root": "/code/tool"}, [])
        assert a["key"] != b["key"]


class TestWhichProjectWins:
    def test_deepest_folder_wins(self):
        projects = [project("p_mono", "/work/mono"), project("p_pkg", "/work/mono/pkg")]
        assert resolve_project({"cwd": "/work/mono/pkg/src"}, projects) == explicit("p_pkg")
        assert resolve_project({"cwd": "/work/mono/other"}, projects) == explicit("p_mono")

    def test_deepest_folder_wins_whatever_the_project_order(self):
        projects = [project("p_pkg", "/work/mono/pkg"), project("p_mono", "/work/mono")]
        assert resolve_project({"cwd": "/work/mono/pkg"}, projects) == explicit("p_pkg")

    def test_a_project_with_several_folders_matches_any_of_them(self):
        projects = [project("p_h", "/work/hermes", "/notes/hermes")]
        assert resolve_project({"cwd": "/notes/hermes/2026"}, projects) == explicit("p_h")

    def test_same_folder_in_two_projects_keeps_the_first(self):
        projects = [project("p_first", "/work/shared"), project("p_second", "/work/shared")]
        assert resolve_project({"cwd": "/work/shared"}, projects) == explicit("p_first")

    def test_archived_project_is_ignored(self):
        got = resolve_project({"cwd": "/work/old/src"}, [project("p_old", "/work/old", archived=True)])
        assert got == HOME

    def test_archived_deeper_project_falls_back_to_the_live_outer_one(self):
        projects = [project("p_outer", "/work"), project("p_inner", "/work/inner", archived=True)]
        assert resolve_project({"cwd": "/work/inner/x"}, projects) == explicit("p_outer")

    def test_archived_project_falls_back_to_the_auto_repo(self):
        got = resolve_project({"cwd": "/work/old", "git_repo_root": "/work/old"},
                              [project("p_old", "/work/old", archived=True)])
        assert got["kind"] == "auto"


class TestStaleGitRoot:
    """Hermes 0.19.0's update_session_cwd never clears git_repo_root, so after a move the row still
    names the old repo. A recorded root counts only when the cwd lies inside it."""

    def test_root_the_cwd_left_is_ignored(self):
        projects = [project("p_a", "/work/repoA"), project("p_notes", "/notes")]
        row = {"cwd": "/notes/plain", "git_repo_root": "/work/repoA"}
        assert resolve_project(row, projects) == explicit("p_notes")

    def test_stale_root_does_not_make_a_home_session_an_auto_repo(self):
        row = {"cwd": "/home/bob", "git_repo_root": "/work/repoA"}
        assert resolve_project(row, []) == HOME

    def test_root_that_contains_the_cwd_counts(self):
        row = {"cwd": "/work/repoA/sub", "git_repo_root": "/work/repoA"}
        assert resolve_project(row, [])["kind"] == "auto"

    def test_windows_root_containing_the_cwd_in_another_spelling_counts(self):
        row = {"cwd": r"C:\Work\RepoA\sub", "git_repo_root": "c:/work/repoa"}
        assert resolve_project(row, [])["kind"] == "auto"


class TestProbedRepoRoot:
    """When Hermes recorded no root, the caller supplies git's common root for the cwd."""

    def test_probed_root_makes_an_auto_project(self):
        row = {"cwd": "/work/tool/src", "git_repo_root": None, "probed_repo_root": "/work/tool"}
        got = resolve_project(row, [])
        assert got["kind"] == "auto" and got["key"] == "work/tool"

    def test_linked_worktree_beside_its_repo_folds_into_the_repo_project(self):
        row = {"cwd": "/work/repoA-feat", "git_repo_root": None, "probed_repo_root": "/work/repoA"}
        assert resolve_project(row, [project("p_a", "/work/repoA")]) == explicit("p_a")


class TestLineage:
    """A compression lineage is one conversation; rotated children have no cwd of their own."""

    ROWS = {
        "root": {"id": "root", "cwd": "/work/a", "git_repo_root": None, "parent_session_id": None,
                 "end_reason": "compression"},
        "mid": {"id": "mid", "cwd": None, "git_repo_root": None, "parent_session_id": "root",
                "end_reason": "compression"},
        "tip": {"id": "tip", "cwd": None, "git_repo_root": None, "parent_session_id": "mid", "end_reason": None},
        "branch": {"id": "branch", "cwd": "/work/b", "git_repo_root": None, "parent_session_id": "tip",
                   "end_reason": None},
    }

    def test_child_without_cwd_takes_its_ancestors_place(self):
        assert effective_place("tip", self.ROWS)["id"] == "root"
        assert resolve_project(effective_place("tip", self.ROWS), [project("p_a", "/work/a")]) == explicit("p_a")

    def test_session_with_its_own_cwd_keeps_it(self):
        assert effective_place("branch", self.ROWS)["id"] == "branch"

    def test_compression_children_share_the_conversation_root(self):
        assert conversation_root("tip", self.ROWS) == "root"
        assert conversation_root("mid", self.ROWS) == "root"

    def test_a_child_of_a_session_not_ended_by_compression_is_its_own_conversation(self):
        assert conversation_root("branch", self.ROWS) == "branch"


class TestAttributionEndToEnd:
    """Real state.db rows, real projects.db, real git; attribution observed through the search tool."""

    def search(self, sid: str, query: str) -> dict:
        return call_tool("project_history_search", {"query": query, "mode": "keyword"}, sid)

    @pytest.mark.slow
    def test_rotated_child_without_cwd_searches_its_ancestors_project(self, world, loaded_plugin):
        repo = world.folder("hermes")
        pid = world.project("Hermes", repo)
        world.session("the flaky websocket reconnect was a timeout bug", cwd=repo)
        root = world.session("let us plan", cwd=repo)
        child = world.compress(root, "continuing after compression")
        # 0.19 leaves the child's cwd empty (the case this test is about); 0.22 copies the
        # parent's — detected, and the search must land in the same project either way.
        assert world.db.get_session(child)["cwd"] == (str(repo) if hermes_line.child_inherits_cwd() else None)

        out = self.search(child, "websocket reconnect")

        assert out["project"]["id"] == pid
        assert len(out["results"]) == 1 and "websocket" in out["results"][0]["snippet"]

    @pytest.mark.slow
    def test_repo_root_comes_from_git_when_hermes_recorded_none(self, world, loaded_plugin):
        repo = world.repo("tool")
        sub = world.folder("tool/src/deep")
        first = world.session("the parser chokes on tabs", cwd=repo)
        cur = world.session("hello", cwd=sub)  # a CLI row: cwd only, git_repo_root NULL
        assert world.db.get_session(cur)["git_repo_root"] is None

        out = self.search(cur, "parser tabs")

        assert out["project"]["kind"] == "auto"
        assert out["project"]["key"].endswith("tool")
        assert [r["session_id"] for r in out["results"]] == [first]

    def test_two_repos_are_two_auto_projects(self, world, loaded_plugin):
        a, b = world.repo("repoA"), world.repo("repoB")
        world.session("the parser chokes on tabs", cwd=b)
        cur = world.session("hello", cwd=a)

        out = self.search(cur, "parser tabs")

        assert out["results"] == [] and out["sessions_in_scope"] == 1

    def test_linked_worktree_inside_the_repo_folds_into_the_repo(self, world, loaded_plugin):
        repo = world.repo("repoA")
        wt = world.worktree(repo, "repoA/.worktrees/feat", "feat")
        main_sid = world.session("the cache eviction uses LRU", cwd=repo)
        cur = world.session("hello", cwd=wt)

        out = self.search(cur, "cache eviction")

        assert [r["session_id"] for r in out["results"]] == [main_sid]

    def test_linked_worktree_beside_the_repo_folds_into_the_repo_project(self, world, loaded_plugin):
        repo = world.repo("repoA")
        wt = world.worktree(repo, "repoA-feat", "feat")
        pid = world.project("RepoA", repo)
        main_sid = world.session("the cache eviction uses LRU", cwd=repo)
        cur = world.session("hello", cwd=wt)

        out = self.search(cur, "cache eviction")

        assert out["project"].get("id") == pid
        assert [r["session_id"] for r in out["results"]] == [main_sid]

    def test_worktree_with_the_common_root_recorded_by_the_desktop_folds_into_the_repo(
            self, world, loaded_plugin):
        repo = world.repo("repoA")
        wt = world.worktree(repo, "repoA-feat", "feat")
        main_sid = world.session("the cache eviction uses LRU", cwd=repo, git_root=repo)
        cur = world.session("hello", cwd=wt, git_root=repo)

        out = self.search(cur, "cache eviction")

        assert [r["session_id"] for r in out["results"]] == [main_sid]

    def test_stale_recorded_root_does_not_pull_a_moved_session_back(self, world, loaded_plugin):
        repo, notes = world.repo("repoA"), world.folder("notes")
        world.project("RepoA", repo)
        pid_notes = world.project("Notes", notes)
        world.session("the cache eviction uses LRU", cwd=repo, git_root=repo)
        in_notes = world.session("a cache eviction essay draft", cwd=notes)
        # What Hermes' own project switch leaves behind: new cwd and, on 0.19, the old
        # git_repo_root (0.22 clears it — detected; either way the session belongs to Notes now).
        cur = world.session("hello", cwd=repo, git_root=repo)
        world.db.update_session_cwd(cur, str(notes), "", "")
        stale = None if hermes_line.update_cwd_clears_git_root() else str(repo)
        assert world.db.get_session(cur)["git_repo_root"] == stale

        out = self.search(cur, "cache eviction")

        assert out["project"]["id"] == pid_notes
        assert [r["session_id"] for r in out["results"]] == [in_notes]

    def test_projects_from_the_real_projects_db_resolve_like_the_table(self, world):
        from hermes_side.stores import hermes_db

        outer, inner = world.folder("mono"), world.folder("mono/pkg")
        p_outer, p_inner = world.project("Mono", outer), world.project("Pkg", inner)
        p_old = world.project("Old", world.folder("old"), archived=True)
        projects = hermes_db.load_projects(world.home)

        assert resolve_project({"cwd": str(inner / "src")}, projects)["id"] == p_inner
        assert resolve_project({"cwd": str(outer / "docs")}, projects)["id"] == p_outer
        assert resolve_project({"cwd": str(world.work / "old")}, projects) == HOME
        assert p_old in {p["id"] for p in projects}
