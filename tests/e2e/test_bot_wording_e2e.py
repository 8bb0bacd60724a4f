"""What a Chinese QQ group reads, through real processes (issue 38): ``hermes recall serve``, a
NoneBot process with the plugin, and this test as the OneBot v11 client. One language per
deployment (Chinese by default, no English glosses), every failure an admin meets names what to
check, member messages stay short, and the wording issue 38 listed is gone.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.onebot import FakeOneBot
from tests.e2e.test_recall_e2e import ADMIN, GROUP_A, _all_text, _ask, _members, deployment  # noqa: F401

pytestmark = pytest.mark.slow  # real processes: scripts/test.sh --fast skips it

UNLINKED = 333333
GLOSS = re.compile(r"\((?:please |nothing |\d+ related|[a-z]+ [a-z]+)[^()]*\)")
CJK = re.compile(r"[\u3400-\u9fff]")


async def test_a_chinese_group_reads_chinese_only_and_each_failure_says_what_to_check(deployment):  # noqa: F811
    home, ids, api, bot = deployment
    bot.extra_env["HISTORY_RECALL_COOLDOWN"] = "600"
    api.start()
    bot.start()
    async with FakeOneBot(bot.ws_url, bot.access_token) as ob:
        member = next(_members)
        found = _all_text(await _ask(ob, GROUP_A, "/recall deploy pipeline --mode keyword", member))
        waited = _all_text(await _ask(ob, GROUP_A, "/recall deploy --mode keyword", member))
        assert waited.startswith("⏳ 检索太频繁了，请") and waited.endswith("秒后再试。")
        dated = _all_text(await _ask(ob, GROUP_A, "/recall walrus --before 2020-01-01", next(_members)))
        assert "--before 2020-01-01" in dated and "日期条件" in dated and "换个说法" not in dated
        bad = _all_text(await _ask(ob, GROUP_A, "/recall walrus --after 2026-13-45", next(_members)))
        assert bad.startswith("⚠️ --after 的值「2026-13-45」不是日期")
        listed = _all_text(await _ask(ob, GROUP_A, "/move", ADMIN))
        assert "slug" not in listed and "• Apollo — /move apollo" in listed
        unlinked_move = _all_text(await _ask(ob, UNLINKED, "/move --home", ADMIN))
        assert "0 段" not in unlinked_move and "不关联任何项目" in unlinked_move
        status = _all_text(await _ask(ob, UNLINKED, "/recall-status", ADMIN))
        assert status.splitlines()[0] == "🩺 本群的历史检索状态" and "default" not in status.splitlines()[0]
        for text in (found, waited, dated, bad, listed, unlinked_move, status):
            assert not GLOSS.search(text) and "(please" not in text, text

        api.stop()
        down = _all_text(await _ask(ob, GROUP_A, "/recall-status", ADMIN))
        assert f"连不上检索服务 {api.url}（连接被拒绝" in down and "`hermes recall serve`" in down
        assert "请稍后再试" not in down and down.count("⚠️") == 0
        assert "检索服务：默认地址" in down  # its routing entry names a project, not an address of its own
        short = _all_text(await _ask(ob, GROUP_A, "/recall deploy", next(_members)))
        assert short == "⚠️ 暂时连不上检索服务，请稍后再试。"  # a member: one short sentence, no address


async def test_an_english_deployment_answers_in_english_only(deployment):  # noqa: F811
    home, ids, api, bot = deployment
    bot.extra_env["HISTORY_RECALL_LANGUAGE"] = "en"
    api.start()
    bot.start()
    async with FakeOneBot(bot.ws_url, bot.access_token) as ob:
        help_text = _all_text(await _ask(ob, GROUP_A, "/recall", next(_members)))
        found = _all_text(await _ask(ob, GROUP_A, "/recall kiwi canary --mode keyword", next(_members)))
        status = _all_text(await _ask(ob, GROUP_A, "/recall-status", ADMIN))
    assert help_text.startswith("📚 /recall <question> — search the history")
    assert found.startswith("📚 ") and "conversations in project \"Apollo\"" in found
    assert status.startswith("🩺 Recall status of this group") and "Connection: ✅" in status
    for text in (help_text, status):
        assert not CJK.search(text), text
