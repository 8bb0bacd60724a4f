"""An English question over Chinese history whose turns begin with the speaker's name (issue 36,
LoCoMo ``rev``): the name is the only word keyword search can find, and every conversation holds
it, so the conversation the question is about must come from meaning, not from which
conversations say "Melanie" (oldest first, when they all do).

Real Hermes writers, the plugin through Hermes' own tool dispatch, the real local e5 model.
The project is past ``common_min_scope`` messages, so the ranking leads the order.
"""

from __future__ import annotations

import pytest

from hermes_side.embedding import build_index, load_settings
from hermes_side.embedding.vectors import drop_indexes
from tests.hermes.world import call_tool, shared_world

# Questions the model alone answers with the painting's day (measured); before the keyword list
# was weighed by rarity, the name-only list put the day of "Melanie：你一定会做得很好" first.
QUESTIONS = ["Which painting did Melanie finish recently?", "Did Melanie finish her oil painting?",
             "What did Melanie paint of the lake?"]
# Two friends' chats, one session a day, each turn with its speaker's name first, as a chat log
# copied into a project keeps it. The painting is the newest.
DAYS = [
    ("Melanie：周末带孩子们去露营了，他们第一次自己搭帐篷", "Caroline：太棒了！天气怎么样？",
     "Melanie：晚上有点冷，不过看到了好多星星", "Caroline：听起来很难忘"),
    ("Caroline：我下个月要去参加一个心理咨询的培训课程", "Melanie：真为你高兴，你一直想做这个",
     "Caroline：是的，我想帮助和我有过相同经历的人", "Melanie：你一定会做得很好"),
    ("Melanie：最近在读一本关于正念的书，很有启发", "Caroline：书名是什么？我也想看看",
     "Melanie：叫《当下的力量》，每天读一章", "Caroline：好，我周末去书店找找"),
    ("Caroline：昨天去参加了支持小组的聚会，大家都很友善", "Melanie：你在那里认识新朋友了吗？",
     "Caroline：认识了两个，我们约好下周一起喝咖啡", "Melanie：真好，多些朋友总是好的"),
    ("Melanie：我报名了下个月的慈善跑步，五公里", "Caroline：你每天都在练习吗？",
     "Melanie：每天早上跑三公里，膝盖有点酸", "Caroline：记得多拉伸，别受伤"),
    ("Caroline：我在考虑领养一个孩子，已经开始查资料了", "Melanie：这是个很大的决定，你准备好了吗？",
     "Caroline：我觉得准备好了，我想给一个孩子一个家", "Melanie：我全力支持你"),
    ("Melanie：女儿上周过生日，我们去了海边", "Caroline：她几岁了？",
     "Melanie：八岁了，她在沙滩上堆了一个大城堡", "Caroline：太可爱了，替我祝她生日快乐"),
    ("Caroline：最近工作有点忙，每天加班到很晚", "Melanie：别太累了，要照顾好自己",
     "Caroline：我知道，这周末打算好好休息一下", "Melanie：去公园走走吧，放松一下"),
    ("Melanie：我们家的狗昨天把沙发咬坏了", "Caroline：哈哈，它叫什么名字？",
     "Melanie：叫奥利弗，才一岁，特别调皮", "Caroline：小狗都这样，长大就好了"),
    ("Caroline：我开始学吉他了，手指好疼", "Melanie：坚持一段时间就会好的",
     "Caroline：老师说我进步挺快的", "Melanie：等你学会了弹给我听"),
    ("Melanie：儿子在学校得了科学竞赛的奖", "Caroline：太厉害了！他做的是什么项目？",
     "Melanie：一个用太阳能驱动的小车", "Caroline：真有创意，你一定很骄傲"),
    ("Caroline：今天去看了一场关于身份认同的讲座", "Melanie：讲得怎么样？",
     "Caroline：很感人，讲者分享了自己的故事", "Melanie：这样的活动很有意义"),
    ("Melanie：这几天终于把那幅湖边日落的油画画完了", "Caroline：哇，你用了什么颜色？",
     "Melanie：大部分是橙色和紫色，湖面上还有倒影", "Caroline：一定很美，挂在哪里了？"),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("speaker-names")) as w:
        folder = w.folder("friends")
        w.project("friends", folder)
        days = [w.session(*turns, cwd=folder, title=f"day {n + 1}", ts=1_700_000_000 + 86_400 * n)
                for n, turns in enumerate(DAYS)]
        asking = w.session(cwd=folder)
        drop_indexes()
        assert build_index(w.home, load_settings(w.home)).status == "done"
        yield {"painting": days[-1], "asking": asking}
        drop_indexes()


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_conversation_about_the_painting_comes_first_not_one_that_only_names_her(world, question):
    out = call_tool("project_history_search", {"query": question, "mode": "hybrid", "limit": 5}, world["asking"])
    assert out["success"] is True and out.get("semantic_status") in (None, "ready"), out
    rows = out["results"]
    assert rows and rows[0]["session_id"] == world["painting"], [(r["session_id"], r["snippet"][:40]) for r in rows]
