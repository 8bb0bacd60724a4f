"""What a group chat carries ranks its own history (issue 36): a member named in the question, through
the real recall API over a Hermes home written with Hermes' own SessionDB the way the NoneBot bridge
writes a chat."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from hermes_side.stores import bindings

KEY = "chat-ranking-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
GROUP = "onebotv11:111"
MEMBERS = {"Ross Geller": 201, "Rachel Green": 202, "Monica Geller": 203}
ROSS_WANTS = "I want to take the dinosaur exhibit to Beijing"


def current(name: str, text: str) -> str:
    """A member's turn as the bridge writes it into a shared group session (reactive mode)."""
    return f"<current_message>\n[user={name} id={MEMBERS[name]}]: {text}\n</current_message>"


def search(client: TestClient, chat: str, query: str) -> list[str]:
    r = client.post("/search", json={"query": query, "chat": chat, "mode": "keyword", "limit": 5}, headers=AUTH)
    assert r.status_code == 200, r.text
    return [row["snippet"].replace(">>>", "").replace("<<<", "") for row in r.json()["results"]]


@pytest.fixture
def group(world, loaded_plugin):
    """A QQ group of three where a member's name stands in a sixth of the rows (his sender tags),
    as in a real group: Ross speaks in 20 of 60 turns, "want" is said in 6."""
    alpha = world.folder("alpha")
    bindings.set_binding(world.home, GROUP, world.project("Alpha", alpha))
    wants = iter(["I want a latte", "I want candles", "I want that job", "I want a clean kitchen",
                  "I want you all at the fashion show"])
    lines: list[tuple[str, str]] = []
    for scene in range(10):  # Ross talks in the first four scenes, five lines of six: 20 of 60 turns
        for i in range(6):
            if scene < 4 and i < 5:
                lines.append(("Ross Geller", ROSS_WANTS if (scene, i) == (2, 3) else f"the museum shift {i} ran late"))
            else:
                name = ("Rachel Green", "Monica Geller")[i % 2]
                said = next(wants, None) if scene >= 5 and i == 2 else None
                lines.append((name, said or f"Central Perk order {scene} {i} is on me"))
    t0 = datetime(2024, 3, 1, 12, tzinfo=UTC).timestamp()
    for scene in range(10):  # one session per scene, as each /clear or overflow reset starts one
        turns = [m for name, text in lines[scene * 6:(scene + 1) * 6]
                 for m in (("user", current(name, text)), ("assistant", "好的"))]
        world.session(*turns, source="api_server", sid=f"hermes-onebotv11+group+111-g{scene}", cwd=alpha,
                      ts=t0 + scene * 86400)
    return TestClient(create_app(world.home, KEY))


def test_a_question_naming_a_member_finds_that_members_words_first(group):
    """The bridge's tags repeat "Ross" in a sixth of the rows, more than the share of the scope past
    which a search drops a word as common; before, "What did Ross want?" was searched as "want" alone and
    Rachel's and Monica's short "I want …" came first."""
    rows = search(group, GROUP, "What did Ross want?")
    assert rows and "dinosaur exhibit" in rows[0], json.dumps(rows, indent=1)



DIRECT = "onebotv11:private:555"
MOVIES_SHARED = "I can share some movies with you: Inception, Interstellar and Arrival are my picks"


@pytest.fixture
def direct_chat(world, loaded_plugin):
    """A direct chat of ten days, one session a day, where films were talked about on two of them:
    "movies" stands in 16 of 120 turns — more than the share of the scope past which a word is
    dropped as common — yet in only two of the ten conversations."""
    alpha = world.folder("alpha")
    bindings.set_binding(world.home, DIRECT, world.project("Alpha", alpha))
    t0 = datetime(2024, 3, 1, 12, tzinfo=UTC).timestamp()
    for day in range(10):
        turns: list[tuple[str, str]] = []
        for i in range(6):
            if day == 3 or (day, i) in ((4, 0), (4, 1)):  # 8 exchanges about movies, 16 turns
                user, bot = f"movies night {i}: any good ones for a rainy day?", "Sure, let us look at movies."
                if (day, i) == (4, 1):
                    bot = MOVIES_SHARED
            else:
                user, bot = f"the garden on day {day} needed water {i}", "Good, keep it up."
            turns += [("user", user), ("assistant", bot)]
        if day == 7:  # a short turn that says "share" and nothing of films
            turns[1] = ("assistant", "Share it, share it with me?")
        world.session(*turns, source="api_server", sid=f"hermes-onebotv11+private+555-g{day}", cwd=alpha,
                      ts=t0 + day * 86400)
    return TestClient(create_app(world.home, KEY))


def test_a_topic_word_of_a_few_conversations_is_searched(direct_chat):
    """"movies" stands in more than a tenth of the chat's turns but in two of its ten conversations:
    a topic, not a name every conversation repeats. Before, it was dropped as common and "Which
    movies did you share with me?" was searched as "share" alone: day 7's short "Share it" came first."""
    rows = search(direct_chat, DIRECT, "Which movies did you share with me?")
    assert rows and "Inception" in rows[0], json.dumps(rows, indent=1)
