"""A Chinese question over a project whose history is mostly English with some Chinese turns
(issue 26, LoCoMo ``zhmix``): the Chinese turn that holds the question's own words comes first,
not an English conversation that holds the dictionary senses of those words ("script", "interface",
"exchange rate") spread over its turns.

Real Hermes writers, the plugin through Hermes' own tool dispatch, the real local e5 model for
hybrid. The project is past ``common_min_scope`` messages, so the ranking leads the order.
"""

from __future__ import annotations

import pytest

from hermes_side.embedding import build_index, load_settings
from hermes_side.embedding.vectors import drop_indexes
from hermes_side.search.settings import RANKING
from tests.hermes.world import call_tool, shared_world

QUESTION = "Stripe 对账脚本 超时 汇率接口"
# The answer: one Chinese turn in a conversation otherwise held in English, as in a team that
# writes both languages.
ANSWER = (
    "The nightly job failed again, see the alert from 02:10",
    "Stripe 对账脚本每晚超时，是因为汇率接口太慢；我们改成先把汇率存到本地，再批量对账，现在十分钟就跑完了。",
    "Great, let's keep an eye on it this week.",
)
# English conversations that hold the question's words only as their English senses (对账
# "verify … records", 脚本 "script", 超时 "timeout"/"limit", 汇率 "exchange rate", 接口
# "interface"/"port"), several to a conversation, and the name the question gives ("Stripe").
SENSES = [
    ("The Stripe payout script hit the rate limit again", "Added a backoff; it retries after the timeout.",
     "Accounting wants the Stripe records exported monthly", "The export script writes them to the finance interface.",
     "Verify the exchange rate on Stripe invoices", "They use the rate at the time of the charge."),
    ("The admin interface times out on the export page", "The port forward on staging was missing; fixed.",
     "Can you verify the two versions of the pricing script?", "Merged them; the interface keeps the new one.",
     "Finance wants the exchange rate in the invoice footer", "Added it under the totals."),
    ("The serial port on the label printer stopped working", "A loose cable; the printer script runs again.",
     "Overtime hours go into the HR interface, not the sheet", "Told the team, the sheet is archived.",
     "Verify the warehouse records before the audit", "Done, three boxes were booked twice."),
]
FILLER = [
    ("Can you review the pagination PR before lunch?", "Left two comments: the cursor should be opaque."),
    ("The linter complains about unused imports", "Removed them and enabled the rule in CI."),
    ("Which Python version does the worker image use?", "3.12, pinned in the Dockerfile."),
    ("The invoice PDF has the wrong logo", "The template pointed at the old asset bucket; fixed."),
    ("Add a healthcheck for the search service", "It answers /healthz with the index age."),
    ("Who owns the payments webhook?", "Lena's team; they rotate the signing secret quarterly."),
    ("The test suite takes twelve minutes now", "Split it into four shards; four minutes now."),
    ("Can we drop support for the old mobile app?", "Not before March: six percent of orders use it."),
    ("How do I run the service locally?", "make dev starts the API, the worker and Postgres."),
    ("Our Sentry quota ran out", "Sampled the noisy 404 errors at ten percent."),
    ("The staging certificate expired", "Renewed it and added an alert 14 days before expiry."),
    ("Where are feature flags configured?", "In the flags table, refreshed every five minutes."),
    ("The email queue is backing up", "The SMTP relay throttled us; switched to the provider's API."),
    ("What is the on-call rotation this week?", "Tom until Wednesday, then Aisha."),
    ("Document the release checklist", "It is in docs/release.md with the rollback steps."),
    ("Why did the nightly backup take three hours?", "It ran during the reindex; moved it an hour later."),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("mixed-language")) as w:
        folder = w.folder("shop")
        w.project("shop", folder)
        answer = w.session(*ANSWER, cwd=folder, title="nightly job alert")
        senses = [w.session(*turns, cwd=folder, title=turns[0][:40]) for turns in SENSES]
        for turns in FILLER:
            w.session(*turns, cwd=folder, title=turns[0][:40])
        asking = w.session(cwd=folder)
        drop_indexes()
        assert build_index(w.home, load_settings(w.home)).status == "done"
        yield {"answer": answer, "senses": senses, "asking": asking}
        drop_indexes()


def search(world, mode: str) -> list[dict]:
    out = call_tool("project_history_search", {"query": QUESTION, "mode": mode, "limit": 5}, world["asking"])
    assert out["success"] is True and out.get("semantic_status") in (None, "ready"), out
    return out["results"]


def test_the_project_is_past_the_size_where_the_ranking_leads():
    n = len(ANSWER) + sum(map(len, SENSES)) + sum(map(len, FILLER))
    assert n >= RANKING.common_min_scope


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_the_chinese_answer_comes_first_over_english_turns_holding_its_senses(world, mode):
    rows = search(world, mode)
    assert rows and rows[0]["session_id"] == world["answer"], [(r["title"], r["snippet"][:60]) for r in rows]
    assert "对账脚本" in rows[0]["snippet"]
    assert rows[0]["relevance"]["level"] == "high"


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_english_turns_still_come_back_for_a_chinese_question_they_alone_answer(world, mode):
    """The translated list still counts where the Chinese turns lack the words: over English
    turns only, a Chinese question finds them through the dictionary."""
    out = call_tool("project_history_search", {"query": "打印机 串口", "mode": mode, "limit": 5}, world["asking"])
    rows = out["results"]
    assert rows and rows[0]["session_id"] == world["senses"][2], [(r["title"], r["snippet"][:60]) for r in rows]
