"""What a new operator meets first: after-install.md, bare `hermes recall consent`, and the demo's
printed commands (which must work when pasted). `hermes recall status` on a brand-new profile is
in test_hermes_features.py."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import hermes_side
from tests import yamlio as yaml

PACKAGE_DIR = Path(hermes_side.__file__).parent


def test_after_install_names_every_package_and_every_tool():
    text = (PACKAGE_DIR / "after-install.md").read_text(encoding="utf-8")
    manifest = yaml.safe_load((PACKAGE_DIR / "plugin.yaml").read_text(encoding="utf-8"))
    for tool in manifest["provides_tools"]:
        assert f"`{tool}`" in text, tool
    for requirement in manifest["pip_dependencies"]:
        name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
        assert f"`{name}`" in text and requirement in text, requirement


def test_bare_consent_shows_the_state_and_how_to_change_it(world, capsys):
    from hermes_side.cli import main

    main(["consent"])  # no SystemExit: not an argparse error
    out = capsys.readouterr().out
    assert "Consent: none" in out and "hermes recall consent grant" in out and "revoke" in out


@pytest.mark.slow  # a real process (recall API or shell)
def test_the_demos_search_lines_work_when_pasted(tmp_path):
    home = tmp_path / "demo-home"
    env = {k: v for k, v in os.environ.items() if k != "HERMES_HOME"} | {"HERMES_HOME": str(home)}
    demo = subprocess.run([sys.executable, "-m", "hermes_side", "demo", "--no-index"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert demo.returncode in (0, 1), demo.stderr[-2000:]  # status exits 1 while semantic is not indexed
    lines = [ln[2:] for ln in demo.stdout.splitlines() if ln.startswith("$ ")]
    assert lines, demo.stdout[-2000:]
    bare = {k: v for k, v in os.environ.items() if k != "HERMES_HOME"}  # the line itself names the home
    for line in lines:
        assert line.startswith(f"HERMES_HOME={home}"), line
        pasted = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=bare, capture_output=True, text=True,
                                timeout=300)
        assert pasted.returncode == 0, line + "\n" + pasted.stderr[-2000:]
        assert "result(s)" in pasted.stdout and "invalid choice" not in pasted.stderr


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> subprocess.CompletedProcess:
    """`python -m hermes_side demo` run once in a fresh throwaway profile, as a new operator runs it
    (real index, real local model); the tests below read what it printed."""
    root = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if k != "HERMES_HOME"} | {"HERMES_HOME": str(root / "demo-home")}
    return subprocess.run([sys.executable, "-m", "hermes_side", "demo"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_demo_finds_each_answer_labelled_as_it_is_and_says_when_nothing_is_related(demo):
    """Issue 26: the demo's own questions come back with their answer first and not marked weak;
    the off-topic one answers "nothing related" (real index, real local model)."""
    from hermes_side.demo import DEMO, QUERIES

    blocks = demo.stdout.split("\n$ ")[1:]
    assert len(blocks) == len(QUERIES), demo.stdout[-3000:] + demo.stderr[-2000:]
    for block, (project, query, answer) in zip(blocks, QUERIES, strict=True):
        assert shlex.quote(query) in block.splitlines()[0], block
        header, *rows = block.splitlines()[1:]
        if answer is None:
            assert header.startswith(f"{project}: nothing related"), block
            continue
        first = next(r for r in rows if r.startswith("1. ["))
        assert re.match(r"1\. \[(high|medium)\] ", first), block
        assert f"] {DEMO[project][answer][0]}  [" in first, block


def test_the_demo_tells_the_truth_about_its_own_profile_shows_whole_titles_and_ends_with_the_next_step(demo):
    """Issue 38: the throwaway profile said "Seal: OPEN … not enabled in this profile" (true of the
    throwaway, not of a real install), titles were cut mid-word, and the output ended with nothing to do."""
    from hermes_side.demo import DEMO

    out = demo.stdout
    seal = next(line for line in out.splitlines() if line.startswith("Seal:"))
    assert seal == "Seal: closed", out[-3000:]  # the profile is set up as a real one: the plugin enabled
    assert "enables the plugin" in demo.stderr and "the seal below is the one your chats would get" in demo.stderr
    titles = {title for conversations in DEMO.values() for title, _ in conversations}
    shown = re.findall(r"^\d+\. \[\w+\] (.+?)  \[", out, re.MULTILINE)
    assert shown and set(shown) <= titles, shown  # whole titles, never a cut one
    tail = out.rstrip().splitlines()[-8:]
    assert tail[0] == "Next: the same on your own Hermes profile", tail
    assert any(line.strip().startswith("hermes recall status") for line in tail)
    assert any("plugins: {enabled: [project-history-recall]}" in line for line in tail)
