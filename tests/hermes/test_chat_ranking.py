"""What a chat carries ranks its own history (issue 36): a member named in the question, a day
named without its year, a topic word of a few conversations — through the real recall API over a
Hermes home written with Hermes' own SessionDB the way the NoneBot bridge writes a chat."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from hermes_side.embedding import build_index, load_settings
from hermes_side.embedding.vectors import drop_indexes
from hermes_side.search.results import format_when
from hermes_side.search.settings import overridden
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


DAYS = {  # a direct chat, one session a day at 20:00 Beijing, as a user talks with the bot each evening
    (4, 27): ("晚上看了一部电影，挺好看", "很高兴你喜欢。"),
    (4, 29): ("周末想去看电影", "可以看看最近的新片。"),
    (5, 2): ("今天去了博物馆，看完恐龙化石展以后又在商场里看了一部很长的科幻电影，回家很晚", "听起来很充实！"),
    (5, 4): ("电影票买好了", "祝你观影愉快。"),
}
# ...and the rest of May, a film most evenings: by their words each is a better conversation for
# "我看了什么电影" than 5月2日's one long message
DAYS |= {(5, day): ("我看了什么电影来着？", f"你看了一部{kind}电影。", "对，我看了两遍那部电影", "电影看两遍也好看。")
         for day, kind in zip(range(5, 17), ("喜剧", "动画", "爱情", "悬疑", "战争", "纪录", "武侠", "恐怖", "音乐",
                                              "体育", "历史", "家庭"), strict=True)}
SMALL_TALK = ("早上喝了咖啡", "中午吃了面条", "下午开了会", "晚上跑步了", "猫又把杯子打翻了", "快递到了",
              "给妈妈打了电话", "窗外下雨了")


@pytest.fixture
def dated_chat(world, loaded_plugin):
    beta = world.folder("beta")
    bindings.set_binding(world.home, DIRECT, world.project("Beta", beta))
    for n, ((month, day), turns) in enumerate(DAYS.items()):
        ts = datetime(2023, month, day, 12, tzinfo=UTC).timestamp()
        said = [(("user", "assistant")[i % 2], text) for i, text in enumerate(turns)]
        chatter = [m for small in SMALL_TALK for m in (("user", small), ("assistant", "记下了。"))]
        world.session(*said, *chatter, source="api_server",
                      sid=f"hermes-onebotv11+private+555-g{n}", cwd=beta, ts=ts)
    return TestClient(create_app(world.home, KEY))


@pytest.mark.parametrize("query", ["5月2日我看了什么电影？", "在5月2号，我看了哪一部电影？"])
def test_a_day_named_without_its_year_finds_that_days_chat(dated_chat, query):
    """"5月2日" names no year, and only a day with its year ranked conversations held then; the
    day's long message lost to three short ones of other days that say 电影 (movie) too."""
    rows = search(dated_chat, DIRECT, query)
    assert rows and "恐龙化石" in rows[0], json.dumps(rows, ensure_ascii=False, indent=1)


def test_the_day_named_leads_where_other_days_hold_more_of_the_words(dated_chat, world):
    """Hybrid: the evenings that repeat "我看了…电影" rank above 5月2日's one long message by words and
    by meaning; the day the question names comes first all the same (settings.named_time_leads)."""
    drop_indexes()
    try:
        assert build_index(world.home, load_settings(world.home)).status == "done"
        r = dated_chat.post("/search", json={"query": "在5月2号，我看了哪一部电影？", "chat": DIRECT, "mode": "hybrid",
                                             "limit": 5}, headers=AUTH)
    finally:
        drop_indexes()
    assert r.status_code == 200, r.text
    rows = [row["snippet"] for row in r.json()["results"]]
    assert rows and "恐龙化石" in rows[0], json.dumps(rows, ensure_ascii=False, indent=1)


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_the_day_named_is_found_when_none_of_its_turns_holds_the_words(dated_chat, world, mode):
    """"在4月27号我们聊了什么话题？" asks for that evening's conversation, and no turn of the chat says
    聊 or 话题: the day's conversation comes first all the same, shown by its first turn that day
    and the turns after it (ranker.held_then, ``score_source`` "date"); before, keyword search had
    nothing to show."""
    drop_indexes()
    try:
        if mode == "hybrid":
            assert build_index(world.home, load_settings(world.home)).status == "done"
        r = dated_chat.post("/search", json={"query": "在4月27号我们聊了什么话题？", "chat": DIRECT, "mode": mode,
                                             "limit": 5}, headers=AUTH)
    finally:
        drop_indexes()
    assert r.status_code == 200, r.text
    rows = r.json()["results"]
    assert rows and "晚上看了一部电影" in rows[0]["snippet"], json.dumps(rows, ensure_ascii=False, indent=1)
    assert "2023-04-27" in rows[0]["when"], rows[0]
    if mode == "keyword":
        assert rows[0]["score_source"] == "date" and rows[0]["relevance"]["level"] == "low"
        # ...with how that evening went on: the turns after its first, as a row's other turns
        assert [m["snippet"] for m in rows[0]["more"]] == ["很高兴你喜欢。", "早上喝了咖啡"], rows[0]


def test_a_month_is_named_by_its_conversations_only_when_they_all_fit(dated_chat):
    """"2023年4月" held two evenings of this chat: both are shown, oldest first, though no turn says
    聊 or 话题. "2023年5月" held fifteen, more than the five rows: the month names none of them in
    particular, and the oldest five would only push out what the words found."""
    def ask(query: str) -> list[dict]:
        r = dated_chat.post("/search", json={"query": query, "chat": DIRECT, "mode": "keyword", "limit": 5},
                            headers=AUTH)
        assert r.status_code == 200, r.text
        return r.json()["results"]

    april = ask("2023年4月我们聊了什么话题？")
    assert [row["when"][:10] for row in april] == ["2023-04-27", "2023-04-29"], april
    assert {row["score_source"] for row in april} == {"date"}
    assert not [row for row in ask("2023年5月我们聊了什么话题？") if row["score_source"] == "date"]


def test_a_row_the_day_alone_brought_never_makes_the_related_row_under_it_weak(dated_chat):
    """"4月27号的恐龙化石展怎么样？": 4月27日's evening says nothing of it and comes first, being that
    day's; 5月2日's "恐龙化石展" row under it keeps the label its own words earn — the day's row is
    labelled apart from the rows' order, not pooled with them."""
    r = dated_chat.post("/search", json={"query": "4月27号的恐龙化石展怎么样？", "chat": DIRECT, "mode": "keyword",
                                         "limit": 5}, headers=AUTH)
    assert r.status_code == 200, r.text
    rows = r.json()["results"]
    assert [row["score_source"] for row in rows[:2]] == ["date", "keyword"], rows
    assert "恐龙化石" in rows[1]["snippet"].replace(">>>", "").replace("<<<", "")
    assert rows[1]["relevance"]["level"] != "low", rows[1]


SMALL_DAYS = {  # a new direct chat: three evenings, six turns — a project where labels lead the order
    (4, 28): ("我们聊聊天吧，随便聊什么话题都行", "好呀，你想聊什么话题？"),
    (4, 29): ("今天去了一家新开的西餐厅", "听起来不错，好吃吗？"),
    (4, 30): ("今天想和你聊聊旅行的话题", "好的，你想去哪里？"),
}


@pytest.fixture
def small_chat(world, loaded_plugin):
    gamma = world.folder("gamma")
    bindings.set_binding(world.home, DIRECT, world.project("Gamma", gamma))
    for n, ((month, day), (user, bot)) in enumerate(SMALL_DAYS.items()):
        world.session(("user", user), ("assistant", bot), source="api_server",
                      sid=f"hermes-onebotv11+private+555-g{n}", cwd=gamma,
                      ts=datetime(2023, month, day, 12, tzinfo=UTC).timestamp())
    return TestClient(create_app(world.home, KEY))


def test_in_a_small_chat_the_day_named_comes_before_the_rows_its_words_found(small_chat):
    """"在4月29日我们聊了哪些话题？" in a chat of six turns, where rows stand in the order of their labels
    (settings.level_order): 4月29日's evening says nothing of 聊 or 话题, and the evenings that do were
    labelled above it and shown first — the day the user named came last. It comes first, as in a
    bigger chat (settings.named_time_over_labels), and the rows under it keep their own labels."""
    def ask() -> list[dict]:
        r = small_chat.post("/search", json={"query": "在4月29日我们聊了哪些话题？", "chat": DIRECT, "mode": "keyword",
                                             "limit": 5}, headers=AUTH)
        assert r.status_code == 200, r.text
        return r.json()["results"]

    rows = ask()
    assert [row["when"][:10] for row in rows] == ["2023-04-29", "2023-04-28", "2023-04-30"], rows
    assert "西餐厅" in rows[0]["snippet"] and rows[0]["score_source"] == "date", rows[0]
    assert all(row["relevance"]["level"] != "low" for row in rows[1:]), rows
    with overridden(named_time_over_labels=False):  # before: labels first, the named day last
        assert [row["when"][:10] for row in ask()][-1] == "2023-04-29"


@pytest.mark.parametrize("query", ["恐龙化石展", "5月2日的恐龙化石展", "what happened on May 2nd?"])
def test_a_turn_whose_time_no_calendar_holds_breaks_no_search(dated_chat, world, query):
    """A session whose times were written in milliseconds (year 55302 to a calendar), as 0.19's
    SessionDB stores whatever time it is given (0.22 refuses it on write and stores the time of
    writing, but keeps the rows an older Hermes wrote): a search that shows the turn, or that names
    a day, still answers — the turn is shown without a time and held on no day — and the day's own
    conversation is not lost."""
    beta = world.folder("beta")
    sid = world.session(("user", "博物馆的恐龙化石展真不错"), ("assistant", "是的。"), source="api_server",
                        sid="hermes-onebotv11+private+555-g99", cwd=beta, ts=1_683_000_000_000.0)
    stored = world.messages(sid)[0]["timestamp"]
    r = dated_chat.post("/search", json={"query": query, "chat": DIRECT, "mode": "keyword", "limit": 5},
                        headers=AUTH)
    assert r.status_code == 200, r.text
    rows = r.json()["results"]
    assert any("恐龙化石" in row["snippet"].replace(">>>", "").replace("<<<", "") and "2023-05-02" in row["when"]
               for row in rows), rows
    imported = [row for row in rows if row["session_id"].endswith("-g99")]
    assert all(row["when"] == ("" if stored > 4102444800 else format_when(stored)) for row in imported), rows
    if query == "恐龙化石展":  # shown, and its window opens
        assert imported, rows
        opened = dated_chat.post("/context", json={"chat": DIRECT, "message_id": imported[0]["message_id"]},
                                 headers=AUTH)
        assert opened.status_code == 200 and "恐龙化石展真不错" in opened.text, opened.text


@pytest.fixture(params=["machine", "hermes"])
def beijing(request, monkeypatch, world, loaded_plugin):
    """A Beijing operator's calendar, either way Hermes knows it: the machine's own time zone (a
    POSIX zone, no tz database needed), or — a server kept in UTC, as most are — Hermes'
    ``timezone`` in config.yaml (hermes_time: what the agent is told the time in)."""
    import time
    from zoneinfo import ZoneInfo

    if request.param == "hermes":
        try:
            ZoneInfo("Asia/Shanghai")
        except Exception:  # noqa: BLE001 — a machine without a tz database cannot name the zone
            pytest.skip("no tz database on this machine")
    config = world.home / "config.yaml"
    saved = config.read_text() if config.exists() else None
    monkeypatch.setenv("TZ", "CST-8" if request.param == "machine" else "UTC")
    time.tzset()
    if request.param == "hermes":
        import yaml

        config.write_text(yaml.safe_dump({**(yaml.safe_load(saved or "") or {}), "timezone": "Asia/Shanghai"}))
    yield request.param
    if saved is None:
        config.unlink(missing_ok=True)
    else:
        config.write_text(saved)
    monkeypatch.undo()
    time.tzset()


def test_a_named_day_is_the_day_the_rows_show_not_the_utc_one(beijing, world, loaded_plugin):
    """An operator in Beijing: a group talked past midnight into 3 May (16:30 UTC on 2 May) and again
    that evening; at 01:00 on 4 May (17:00 UTC on 3 May) someone watched a match. "在5月3号我们聊了什么？"
    brings the two conversations of 3 May as the rows show them, and not the one of 4 May — by UTC
    days it brought the wrong pair; ``after: 2023-05-03`` starts at Beijing's midnight too."""
    beta = world.folder("beta")
    bindings.set_binding(world.home, DIRECT, world.project("Beta", beta))
    at = {"late": datetime(2023, 5, 2, 16, 30, tzinfo=UTC), "evening": datetime(2023, 5, 3, 12, tzinfo=UTC),
          "match": datetime(2023, 5, 3, 17, tzinfo=UTC), "before": datetime(2023, 5, 1, 12, tzinfo=UTC)}
    said = {"late": "半夜还在调路由器", "evening": "晚上吃了火锅", "match": "凌晨起来看球赛", "before": "下午去了超市"}
    for n, key in enumerate(at):
        world.session(("user", said[key]), ("assistant", "记下了。"), source="api_server",
                      sid=f"hermes-onebotv11+private+555-g{n}", cwd=beta, ts=at[key].timestamp())
    client = TestClient(create_app(world.home, KEY))

    def ask(**extra) -> list[dict]:
        r = client.post("/search", json={"chat": DIRECT, "mode": "keyword", "limit": 5, **extra}, headers=AUTH)
        assert r.status_code == 200, r.text
        return r.json()["results"]

    rows = [(row["when"], row["snippet"]) for row in ask(query="在5月3号我们聊了什么话题？")
            if row["score_source"] == "date"]
    assert rows == [("2023-05-03 00:30", "半夜还在调路由器"), ("2023-05-03 20:00", "晚上吃了火锅")], rows
    late = ask(query="路由器", after="2023-05-03", before="2023-05-04")
    assert [row["when"] for row in late] == ["2023-05-03 00:30"], late
    assert ask(query="球赛", before="2023-05-04") == []  # 01:00 on 4 May is not before 4 May


@pytest.fixture
def recent_chat(beijing, world, loaded_plugin):
    """A direct chat of the last three weeks, on a Beijing calendar (either way Hermes knows it):
    yesterday's dinner plan; three days ago, a fix "昨天" made; Thursday of last week; and a week
    before that."""
    from zoneinfo import ZoneInfo

    beta = world.folder("beta")
    bindings.set_binding(world.home, DIRECT, world.project("Beta", beta))
    zone = datetime.now(UTC).astimezone().tzinfo if beijing == "machine" else ZoneInfo("Asia/Shanghai")
    today = datetime.now(zone).date()
    monday = today - timedelta(days=today.weekday())
    days = {"yesterday": today - timedelta(days=1), "three days ago": today - timedelta(days=3),
            "last week": monday - timedelta(days=4), "the week before": monday - timedelta(days=12)}
    said = {"yesterday": ("晚上一起去吃火锅吧", "好的，七点老地方见。"),
            "three days ago": ("昨天的报错我修好了", "部署脚本也改好了。"),
            "last week": ("周四的评审改到下午", "收到，会议室订好了。"),
            "the week before": ("上周的周报谁来写", "我来写。")}
    for n, key in enumerate(sorted(days, key=days.get)):
        day = days[key]
        world.session(("user", said[key][0]), ("assistant", said[key][1]), source="api_server",
                      sid=f"hermes-onebotv11+private+555-g{n}", cwd=beta,
                      ts=datetime(day.year, day.month, day.day, 12, tzinfo=zone).timestamp())
    client = TestClient(create_app(world.home, KEY))

    def ask(query: str, mode: str = "keyword", limit: int = 5, whole: bool = False) -> list[dict] | dict:
        r = client.post("/search", json={"query": query, "chat": DIRECT, "mode": mode, "limit": limit},
                        headers=AUTH)
        assert r.status_code == 200, r.text
        if datetime.now(zone).date() != today:  # midnight passed while the test ran: another yesterday
            pytest.skip("the day changed during the test")
        return r.json() if whole else r.json()["results"]

    return ask, said, days


@pytest.mark.parametrize(("query", "day"), [("昨天我们聊了什么？", "yesterday"),
                                            ("what did we talk about yesterday?", "yesterday"),
                                            ("上周聊了什么", "last week")])
def test_a_day_counted_back_from_now_is_the_groups_day(recent_chat, query, day):
    """"/recall 昨天我们聊了什么" asks for yesterday's conversations on the group's calendar — before,
    昨天 was a word to match (and "yesterday" its translation), so the turn that *said* 昨天 three days
    ago came first and yesterday's talk was not shown at all. "上周" is the week before this one,
    Monday to Sunday."""
    ask, said, days = recent_chat
    rows = ask(query)
    assert rows and rows[0]["snippet"] == said[day][0], json.dumps(rows, ensure_ascii=False, indent=1)
    assert rows[0]["when"][:10] == days[day].isoformat() and rows[0]["score_source"] == "date", rows[0]
    assert "昨天的报错" not in rows[0]["snippet"]


def test_a_day_counted_back_that_holds_no_talk_leaves_the_words_searched(recent_chat):
    """Twenty days ago the chat said nothing: "二十天前的报错" is then searched by its words, and the
    fix of three days ago is what it finds (the time is read as a time only where it holds turns)."""
    ask, said, _ = recent_chat
    rows = ask("二十天前的报错")
    assert rows and "报错" in rows[0]["snippet"] and rows[0]["score_source"] == "keyword", rows


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "semantic"])
@pytest.mark.parametrize("query", ["昨天", "yesterday?"])
def test_a_time_alone_brings_the_conversations_held_then_and_nothing_else(recent_chat, world, mode, query):
    """"/recall 昨天": the time is all it asks. Yesterday's conversation is the answer, shown by how
    it opened — not the turn that says 昨天, nor (hybrid, semantic) the model's neighbours of an
    empty question, which were every other conversation of the chat."""
    ask, said, days = recent_chat
    drop_indexes()
    try:
        if mode != "keyword":
            assert build_index(world.home, load_settings(world.home)).status == "done"
        rows = ask(query, mode=mode)
    finally:
        drop_indexes()
    assert [(row["snippet"], row["score_source"]) for row in rows] == [(said["yesterday"][0], "date")], rows


def test_a_time_alone_that_holds_more_than_the_rows_says_how_many(recent_chat):
    """"上周" held more conversations than one row shows: the answer names none of them in
    particular — it says how many, so the bot can ask for a topic or a shorter time."""
    ask, said, days = recent_chat
    held = [day for day in days.values() if day in _last_week(days["yesterday"] + timedelta(days=1))]
    answer = ask("上周", limit=1, whole=True)
    if len(held) > 1:
        assert answer["results"] == [] and answer["held_then"] == len(held), answer
        assert "shorter time" in answer["message"]
    else:
        assert len(answer["results"]) == 1 and "held_then" not in answer, answer


def _last_week(today):
    monday = today - timedelta(days=today.weekday())
    return {monday - timedelta(days=n) for n in range(1, 8)}


@pytest.fixture
def uncleared_group(world, loaded_plugin):
    """A group as the bridge writes it when nobody types /clear: one shared session over three weeks
    (Hermes compacts it in place; the id stays). The group talked about deploying on six afternoons,
    each a burst of talk of its own, with other talk between; and an evening when one member pasted a
    build log of twenty lines that all say "deploy"."""
    alpha = world.folder("alpha")
    bindings.set_binding(world.home, GROUP, world.project("Alpha", alpha))
    sid = "hermes-onebotv11+group+111"
    world.db.create_session(sid, "api_server", cwd=str(alpha))
    start = datetime(2026, 10, 1, 14, tzinfo=UTC).timestamp()
    deploys = {1: "deploy the billing service behind the feature flag", 4: "deploy failed on the staging cluster",
               7: "deploy window moved to Thursday night", 10: "deploy needs the database backup first",
               13: "deploy checklist lives in the wiki", 16: "deploy rollback took four minutes"}
    other = ("lunch at the noodle place", "the printer is jammed again", "who has the meeting room")
    for day in range(18):
        t = start + day * 86400
        lines = ([deploys[day], "ok, noted", "I will watch the dashboards"] if day in deploys
                 else [other[day % 3], "sure", "thanks"])
        if day == 17:  # a pasted log: one burst, twenty lines
            lines = [f"[build {n}] deploy step {n} done" for n in range(20)]
        talk = [(t, lines)] + ([(t + 6 * 3600, ["dinner on Friday?", "yes, at eight"])] if day == 10 else [])
        for at, said in talk:  # 11 October: the evening's talk too, six hours after the afternoon's
            for n, text in enumerate(said):
                name = ("Ross Geller", "Rachel Green", "Monica Geller")[n % 3]
                world.db.append_message(sid, "user", current(name, text), timestamp=at + n * 40)
                world.db.append_message(sid, "assistant", "好的", timestamp=at + n * 40 + 5)
    return TestClient(create_app(world.home, KEY)), deploys


def test_a_group_session_of_weeks_is_one_conversation_per_burst_of_talk(uncleared_group):
    """"/recall deploy" in a group whose session nobody cleared: each afternoon the group talked
    about deploying is a row of its own. Before, the session was one conversation — one row for
    three weeks of talk — and its keyword hits were capped at eight for the whole session, so the
    pasted log's twenty lines took them all and the discussions were never seen."""
    client, deploys = uncleared_group
    r = client.post("/search", json={"query": "deploy", "chat": GROUP, "mode": "keyword", "limit": 10},
                    headers=AUTH)
    assert r.status_code == 200, r.text
    rows = r.json()["results"]
    shown = " ".join(row["snippet"] for row in rows)
    assert all(said.split()[1] in shown for said in deploys.values()), json.dumps(rows, indent=1)
    assert len({row["when"][:10] for row in rows}) == len(rows) == 7, [row["when"] for row in rows]  # + the log
    log = [row for row in rows if "[build" in row["snippet"]]
    assert len(log) == 1 and all("[build" in more["snippet"] for more in log[0]["more"]), log


def test_a_named_day_in_a_group_session_of_weeks_is_that_days_talk(uncleared_group):
    """"What did we say about deploy on October 11th?" in the same session: that afternoon's
    conversation leads, though the session matched on five other days."""
    client, deploys = uncleared_group
    r = client.post("/search", json={"query": "what did we say about deploy on October 11th 2026?", "chat": GROUP,
                                     "mode": "keyword", "limit": 5}, headers=AUTH)
    rows = r.json()["results"]
    assert rows and "database backup" in rows[0]["snippet"] and rows[0]["when"].startswith("2026-10-11"), rows


def test_a_day_in_a_group_session_of_weeks_brings_each_conversation_held_then(uncleared_group):
    """"/recall 2026年10月11日": that day's afternoon and evening, each by how it opened — one
    session, two conversations (as one conversation, only the afternoon's opening was shown)."""
    client, _ = uncleared_group
    r = client.post("/search", json={"query": "2026年10月11日", "chat": GROUP, "mode": "keyword", "limit": 5},
                    headers=AUTH)
    day = r.json()["results"]  # (then rows its digits found on other days: they are words here)
    assert [(row["when"][:16], row["score_source"]) for row in day][:2] == [
        ("2026-10-11 14:00", "date"), ("2026-10-11 20:00", "date")], day
    assert "database backup" in day[0]["snippet"] and "dinner" in day[1]["snippet"]


def test_last_week_in_a_group_session_of_weeks_counts_its_conversations(world, loaded_plugin):
    """"/recall 上周" in a group whose one session talked every afternoon of the last three weeks:
    last week's seven afternoons are seven conversations — shown when the rows hold them, counted
    when they do not. As one conversation, the first turn of last week stood for all of it."""
    alpha = world.folder("alpha")
    bindings.set_binding(world.home, GROUP, world.project("Alpha", alpha))
    sid = "hermes-onebotv11+group+111"
    world.db.create_session(sid, "api_server", cwd=str(alpha))
    today = datetime.now().astimezone().date()  # the profile's calendar: the machine's, here
    for back in range(21, 0, -1):
        day = today - timedelta(days=back)
        at = datetime(day.year, day.month, day.day, 14).astimezone().timestamp()
        world.db.append_message(sid, "user", current("Rachel Green", f"notes of {day.isoformat()}"), timestamp=at)
        world.db.append_message(sid, "assistant", "好的", timestamp=at + 5)
    client = TestClient(create_app(world.home, KEY))

    def ask(limit: int) -> dict:
        r = client.post("/search", json={"query": "上周", "chat": GROUP, "mode": "keyword", "limit": limit},
                        headers=AUTH)
        assert r.status_code == 200, r.text
        if datetime.now().astimezone().date() != today:
            pytest.skip("the day changed during the test")
        return r.json()

    week = sorted(day.isoformat() for day in _last_week(today))
    shown = ask(10)["results"]
    assert [row["when"][:10] for row in shown] == week and {row["score_source"] for row in shown} == {"date"}, shown
    counted = ask(5)
    assert counted["results"] == [] and counted["held_then"] == 7, counted


def passive(lines: list[tuple[int, str, str]], text: str) -> str:
    """A member's turn as the bridge writes it by default (passive mode, perception on): the group's
    last lines, each with the bridge's message id, then the member's text @-ing the bot."""
    recent = "\n".join(f"[m:{mid}] [user={name} id={MEMBERS[name]}]: {said}" for mid, name, said in lines)
    return f"<recent_messages>\n{recent}\n</recent_messages>\n\n{text} @2854196310"


@pytest.mark.parametrize("scan_max", [None, 0], ids=["scanned", "fts"])
def test_last_nights_lines_carried_into_the_mornings_turn_are_last_nights(world, loaded_plugin, ranking, scan_max):
    """The bridge keeps the group's last lines whatever their age: the first @ of the morning carries
    last night's talk about the quokka in its buffer. "/recall quokka" is last night's conversation
    alone; before, the morning's coffee order was a second row, a match for words it never said.
    Both ways a scope is searched: read whole, and through Hermes' FTS index (a big scope)."""
    if scan_max is not None:
        ranking(scan_scope_max=scan_max)
    alpha = world.folder("alpha")
    bindings.set_binding(world.home, GROUP, world.project("Alpha", alpha))
    evening = datetime(2026, 3, 1, 20, tzinfo=UTC).timestamp()
    zoo = [(1, "Ross Geller", "we went to the zoo after work"), (2, "Monica Geller", "which animals?"),
           (3, "Ross Geller", "the penguins were asleep, the otters were not"),
           (4, "Rachel Green", "and the quokka smiled at me the whole time"), (5, "Monica Geller", "so cute")]
    said = [(zoo, "Rachel Green", evening,
             "can you find the zoo's opening hours for Saturday, and whether they let you feed the otters?")]
    morning = [(6, "Monica Geller", "morning all"), (7, "Ross Geller", "coffee?")]
    said.append((zoo + morning, "Monica Geller", evening + 13 * 3600, "two flat whites please"))
    for lines, name, at, text in said:
        sid = f"hermes-onebotv11+group+111+{MEMBERS[name]}"
        world.db.create_session(sid, "api_server", cwd=str(alpha))
        world.db.append_message(sid, "user", passive(lines[-10:], text), timestamp=at)
        world.db.append_message(sid, "assistant", "好的", timestamp=at + 6)
    client = TestClient(create_app(world.home, KEY))
    r = client.post("/search", json={"query": "quokka", "chat": GROUP, "mode": "keyword", "limit": 5}, headers=AUTH)
    assert r.status_code == 200, r.text
    rows = r.json()["results"]
    assert [row["when"][:10] for row in rows] == ["2026-03-01"], json.dumps(rows, indent=1)
    r = client.post("/search", json={"query": "flat whites", "chat": GROUP, "mode": "keyword", "limit": 5},
                    headers=AUTH)
    assert [row["when"][:10] for row in r.json()["results"]] == ["2026-03-02"]  # the morning's own words count
