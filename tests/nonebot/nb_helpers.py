"""Events, a message capture and a fake recall API for the nonebug tests (see conftest.py)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
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
