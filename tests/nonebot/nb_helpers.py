"""Events, a message capture and a fake recall API for the nonebug tests (see conftest.py)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ADMIN_ID = 10001
USER_ID = 10002
ROUTED_GROUP = 20001  # has its own endpoint and key in HISTORY_RECALL_GROUPS
PLAIN_GROUP = 20002  # not listed: default endpoint
BOT_ID = "999"

API_URL = "http://recall.test"
API_KEY = "global-key-0123456789abcdef"
TEAM_URL = "http://recall.test/p/team-a"
TEAM_KEY = "team-a-key-0123456789abcdef"

# --- events -------------------------------------------------------------------------------------

_message_ids = itertools.count(1)


def group_message(text: str, user_id: int = USER_ID, group_id: int = PLAIN_GROUP, role: str = "member"):
    from nonebot.adapters.onebot.v11 import GroupMessageEvent, Message
    from nonebot.adapters.onebot.v11.event import Sender

    return GroupMessageEvent(
        time=1_760_000_000,
        self_id=int(BOT_ID),
        post_type="message",
        sub_type="normal",
        user_id=user_id,
        message_type="group",
        message_id=next(_message_ids),
        message=Message(text),
        original_message=Message(text),
        raw_message=text,
        font=0,
        sender=Sender(user_id=user_id, nickname="someone", role=role),
        to_me=False,
        group_id=group_id,
    )


def private_message(text: str, user_id: int = USER_ID):
    from nonebot.adapters.onebot.v11 import Message, PrivateMessageEvent
    from nonebot.adapters.onebot.v11.event import Sender

    return PrivateMessageEvent(
        time=1_760_000_000,
        self_id=int(BOT_ID),
        post_type="message",
        sub_type="friend",
        user_id=user_id,
        message_type="private",
        message_id=next(_message_ids),
        message=Message(text),
        original_message=Message(text),
        raw_message=text,
        font=0,
        sender=Sender(user_id=user_id, nickname="someone"),
        to_me=True,
    )


# (group, user) pairs whose group role nonebot-plugin-uninfo has looked up in this test (conftest
# clears it with uninfo's own cache before each test).
looked_up: set[tuple[int, int]] = set()


def expect_role_lookup(ctx, event) -> None:
    """With group admins allowed to /move, the plugin asks nonebot-plugin-uninfo for the sender's
    role; on OneBot v11 uninfo asks the client for the group and the member once per (group, user)
    and caches the answer. Declare those two calls (nonebug fails on undeclared ones) the first time."""
    from nonebot_plugin_history_recall.config import plugin_config

    key = (event.group_id, event.user_id)
    bot_admin = f"onebotv11:{event.user_id}" in plugin_config.history_recall_admin_users
    if not plugin_config.history_recall_group_admins_can_move or bot_admin or key in looked_up:
        return
    looked_up.add(key)
    ctx.should_call_api("get_group_info", {"group_id": event.group_id},
                        {"group_id": event.group_id, "group_name": "group", "member_count": 3, "max_member_count": 500})
    ctx.should_call_api("get_group_member_info",
                        {"group_id": event.group_id, "user_id": event.user_id, "no_cache": True},
                        {"group_id": event.group_id, "user_id": event.user_id, "nickname": "someone", "card": "",
                         "role": event.sender.role, "join_time": 0})


class Captured:
    """Stands in for the expected message of ``should_call_send``: accepts whatever is sent and
    keeps its plain text, so the test can assert on it afterwards with ordinary asserts."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.messages: list[object] = []

    def __eq__(self, other: object) -> bool:
        extract = getattr(other, "extract_plain_text", None)
        self.texts.append(extract() if callable(extract) else str(other))
        self.messages.append(other)
        return True

    def quotes(self, event) -> bool:
        """The one message sent starts with a reply segment pointing at ``event``."""
        (message,) = self.messages
        first = message[0] if len(message) else None
        return first is not None and first.type == "reply" and str(first.data.get("id")) == str(event.message_id)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    @property
    def text(self) -> str:
        assert len(self.texts) == 1, f"expected exactly one message, got {self.texts}"
        return self.texts[0]


# --- the recall API -----------------------------------------------------------------------------

Responder = Callable[[httpx.Request], httpx.Response]

# Answers of the real recall API, recorded by tests/hermes/test_api_contract.py.
RECORDINGS = Path(__file__).resolve().parents[1] / "fixtures" / "recall_api"


def recorded(name: str) -> dict[str, Any]:
    """``{"request": {"method", "path", "body"}, "status", "body"}`` as the real server answered."""
    return json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))


def _shape_problems(real: Any, made: Any, where: str = "$") -> list[str]:
    if isinstance(real, dict):
        if not isinstance(made, dict):
            return [f"{where}: not an object"]
        if set(real) != set(made):
            return [f"{where}: keys {sorted(made)} != the server's {sorted(real)}"]
        return [p for k in real for p in _shape_problems(real[k], made[k], f"{where}.{k}")]
    if isinstance(real, list):
        if not isinstance(made, list):
            return [f"{where}: not a list"]
        return [p for i, m in enumerate(made) for p in _shape_problems(real[0], m, f"{where}[{i}]")] if real else []
    if real is None or made is None or isinstance(made, type(real)) or isinstance(real, type(made)):
        return []
    return [f"{where}: {type(made).__name__} != the server's {type(real).__name__}"]


def shaped_like(name: str, made: dict[str, Any]) -> dict[str, Any]:
    """A hand-made answer (for a test that needs its own values) checked against the shape of
    the real server's recorded answer ``name``: same keys at every level, same value types."""
    problems = _shape_problems(recorded(name)["body"], made)
    assert not problems, f"hand-made answer drifted from recording {name!r}: {problems}"
    return made


class FakeRecallApi:
    """Answers by ``(method, path)``; a route may be a response, a JSON body or an exception."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.timeouts: list[float] = []
        self._routes: dict[tuple[str, str], Responder] = {}

    def route(self, method: str, path: str, status: int = 200, json_body: Any = None, raises=None) -> None:
        def respond(request: httpx.Request) -> httpx.Response:
            if raises is not None:
                raise raises
            return httpx.Response(status, json=json_body)

        self._routes[(method, path)] = respond

    def replay(self, name: str, *, prefix: str = "", path: str | None = None,
               method: str | None = None) -> dict[str, Any]:
        """Answer the recorded request ``name`` with the real server's recorded answer.

        ``prefix`` puts it under an endpoint's ``/p/<profile>``; ``path`` and ``method`` replace
        the recorded ones (another chat's binding; an answer every route can give, like 401).
        Returns the recorded body for the test's asserts. A new route needs only a new exchange
        in tests/hermes/test_api_contract.py and a re-record."""
        rec = recorded(name)
        self.route(method or rec["request"]["method"], prefix + (path or rec["request"]["path"]),
                   status=rec["status"], json_body=rec["body"])
        return rec["body"]

    def route_raw(self, method: str, path: str, responder: Responder) -> None:
        self._routes[(method, path)] = responder

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        responder = self._routes.get((request.method, request.url.path))
        if responder is None:
            return httpx.Response(404, json={"detail": "Not Found"})
        return responder(request)

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]
