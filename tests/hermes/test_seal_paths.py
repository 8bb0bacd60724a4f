"""Look-alike working folders (issue 35): a session is filed in the project whose folder the
operating system resolves its cwd to, never in one its spelling merely resembles.

Hermes' own ``getcwd`` never writes these spellings, but a TUI, desktop or ACP client can set a
session's cwd to any string. The red-team probe: ``<work>/alpha/../vault`` was filed in Alpha
(segments compared without resolving ``..``) and the POSIX ``//<work>/ALPHA`` was taken for a
Windows UNC path and case-folded into Alpha — so a group bound to Alpha, and the operator in Alpha,
read the vault's and the other folder's words. Real folders on this machine, sessions written by
Hermes' SessionDB, the search through Hermes' own plugin loader and tool dispatch.
"""

from __future__ import annotations

import os

import pytest

from hermes_side.stores import bindings
from tests.hermes.world import call_tool_raw

G111 = "hermes-onebotv11+group+111"


@pytest.fixture
def lookalikes(world, loaded_plugin):
    w = world
    w.alpha_dir, w.vault, w.upper = w.folder("alpha"), w.folder("vault"), w.folder("ALPHA")
    w.dotdot, w.double = f"{w.alpha_dir}/../vault", f"/{w.upper}"  # "//<work>/ALPHA"
    # What this machine's file system makes of the two spellings: other folders than Alpha's.
    assert os.path.realpath(w.dotdot) == str(w.vault)
    assert os.path.samefile(w.double, w.upper) and not os.path.samefile(w.upper, w.alpha_dir)
    w.alpha = w.project("Alpha", w.alpha_dir)
    bindings.set_binding(w.home, "onebotv11:111", w.alpha)
    w.in_alpha = w.session("kestrel alphaword plan", cwd=w.alpha_dir)
    w.session("kestrel vaultword secret", cwd=w.dotdot)
    w.session("kestrel upperword secret", cwd=w.double)
    w.session("what did we say?", source="api_server", sid=G111)
    w.operator = w.session("hello", cwd=w.alpha_dir)
    return w


@pytest.mark.parametrize("asker", ["group", "operator"])
def test_a_lookalike_cwd_is_not_in_the_project_it_resembles(lookalikes, asker):
    w = lookalikes
    raw = call_tool_raw("project_history_search", {"query": "kestrel", "mode": "keyword", "limit": 10},
                        G111 if asker == "group" else w.operator)

    assert "alphaword" in raw
    assert "vaultword" not in raw and "upperword" not in raw


def test_the_real_folder_spelled_another_way_is_still_the_project(lookalikes):
    w = lookalikes
    w.session("kestrel detourword notes", cwd=f"{w.vault}/../alpha/./src/")  # resolves into Alpha

    raw = call_tool_raw("project_history_search", {"query": "kestrel", "mode": "keyword", "limit": 10}, G111)

    assert "detourword" in raw and "vaultword" not in raw
