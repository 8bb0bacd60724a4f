"""A tiny fake OneBot v11 implementation (the QQ side) for end-to-end tests.

It plays what NapCat / LLOneBot would: connects to a real NoneBot process over reverse WebSocket,
pushes message events, answers the bot's API calls with ``ok`` frames, and records every action
the bot takes so a test can wait for one (``expect_action``) or prove there was none
(``expect_no_action``).

    async with FakeOneBot(proc.ws_url, proc.access_token) as ob:
        await ob.send_group_message("/recall foo", group_id=20002, user_id=10002)
        action = await ob.expect_action()
        assert action.action == "send_msg" and "foo" in action.text

Protocol facts (nonebot-adapter-onebot 2.4.6): headers ``X-Self-ID`` (required),
``X-Client-Role: Universal`` and ``Authorization: Bearer <token>``; frames without ``post_type``
are API results matched to the request by ``echo``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

# NoneBot closes a second socket with the same X-Self-ID until the first one is deregistered.
DUPLICATE_SELF_ID_CLOSE = 1008


_IDS = itertools.count(1)
# Calls that read the group (nonebot-plugin-uninfo asks for the group and the member to learn a
# sender's role): answered, recorded in ``actions``, but not queued for ``expect_action``.
LOOKUPS = frozenset({"get_group_info", "get_group_member_info", "get_stranger_info"})


@dataclass
class Action:
    """One API call the bot made, e.g. ``send_msg`` with its params."""

    action: str
    params: dict[str, Any]
    echo: Any = None

    @property
    def text(self) -> str:
        """Plain text of ``params["message"]`` (segments or a string); empty if there is none."""
        return message_text(self.params.get("message"))

    @property
    def forward_texts(self) -> list[str]:
        """Text of each node of a ``send_group_forward_msg``."""
        return [message_text(node.get("data", {}).get("content")) for node in self.params.get("messages") or []]


def message_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, dict):
        message = [message]
    parts = []
    for segment in message or []:
        if isinstance(segment, dict) and segment.get("type") == "text":
            parts.append(str(segment.get("data", {}).get("text", "")))
    return "".join(parts)


@dataclass
class FakeOneBot:
    ws_url: str
    access_token: str | None = None
    self_id: int = 999
    nickname: str = "RecallBot"
    failing: set[str] = field(default_factory=set)
    """Action names to answer with a ``failed`` frame (e.g. ``send_group_forward_msg``)."""

    actions: list[Action] = field(default_factory=list, init=False)
    roles: dict[int, str] = field(default_factory=dict, init=False)
    """Each member's role in the groups, as their last message event said (get_group_member_info)."""
    _queue: asyncio.Queue[Action] = field(default_factory=asyncio.Queue, init=False)
    _ws: ClientConnection | None = field(default=None, init=False)
    _reader: asyncio.Task[None] | None = field(default=None, init=False)
    _close_code: int | None = field(default=None, init=False)
    # One counter for every client of the process: a real OneBot never reuses a message id, and
    # nonebot-plugin-alconna caches a message's parse by its id (a reused id got an earlier
    # message's parse: a /recall after an @bot turn from another connection was not seen).
    _ids: itertools.count = field(default_factory=lambda: _IDS, init=False)

    async def __aenter__(self) -> FakeOneBot:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- connection -----------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"X-Self-ID": str(self.self_id), "X-Client-Role": "Universal"}
        if self.access_token:
            headers["Authorization"] = f"Bearer {self.access_token}"
        return headers

    async def connect(self, attempts: int = 20, settle: float = 0.3) -> None:
        """Connect, retrying while NoneBot still holds a previous socket of the same self id."""
        for _ in range(attempts):
            self._close_code = None
            self._ws = await connect(self.ws_url, additional_headers=self._headers(), open_timeout=10)
            self._reader = asyncio.create_task(self._read())
            await asyncio.sleep(settle)
            if not self._reader.done():
                return
            if self._close_code != DUPLICATE_SELF_ID_CLOSE:
                raise ConnectionError(f"NoneBot closed the connection (code {self._close_code})")
        raise ConnectionError("NoneBot kept rejecting the connection as a duplicate X-Self-ID")

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._ws = self._reader = None

    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for raw in self._ws:
                frame = json.loads(raw)
                if "action" in frame:
                    await self._answer(frame)
        except ConnectionClosed as exc:
            self._close_code = exc.rcvd.code if exc.rcvd else None
        else:
            self._close_code = self._ws.close_code

    async def _answer(self, frame: dict[str, Any]) -> None:
        action = Action(frame["action"], frame.get("params") or {}, frame.get("echo"))
        self.actions.append(action)
        if action.action not in LOOKUPS:  # what the bot reads, not what it does: not waited for
            self._queue.put_nowait(action)
        if action.action in self.failing:
            reply = {"status": "failed", "retcode": 100, "data": None, "msg": "fake failure", "wording": "fake failure"}
        else:
            reply = {"status": "ok", "retcode": 0, "data": self._result(action)}
        assert self._ws is not None
        await self._ws.send(json.dumps({**reply, "echo": action.echo}))

    def _result(self, action: Action) -> Any:
        if action.action == "get_login_info":
            return {"user_id": self.self_id, "nickname": self.nickname}
        if action.action == "get_group_info":
            return {"group_id": action.params.get("group_id"), "group_name": "group", "member_count": 3}
        if action.action == "get_group_member_info":
            user = action.params.get("user_id")
            return {"group_id": action.params.get("group_id"), "user_id": user, "nickname": "member", "card": "",
                    "role": self.roles.get(user, "member"), "join_time": 0}
        if action.action == "send_group_forward_msg":
            n = next(self._ids)
            return {"message_id": 700_000 + n, "forward_id": f"forward-{n}"}
        if action.action.startswith("send_"):
            return {"message_id": 700_000 + next(self._ids)}
        return {}

    # --- events ---------------------------------------------------------------------------------

    async def _push(self, event: dict[str, Any]) -> None:
        if self._ws is None:
            raise RuntimeError("not connected")
        await self._ws.send(json.dumps(event))

    def _message_event(self, text: str, user_id: int, nickname: str) -> dict[str, Any]:
        message_id = 100_000 + next(self._ids)
        return {
            "time": int(time.time()),
            "self_id": self.self_id,
            "post_type": "message",
            "message_id": message_id,
            "user_id": user_id,
            "message": [{"type": "text", "data": {"text": text}}],
            "raw_message": text,
            "font": 0,
            "sender": {"user_id": user_id, "nickname": nickname, "card": ""},
        }

    async def send_group_message(
        self, text: str, group_id: int, user_id: int, nickname: str = "member", role: str = "member",
        at_self: bool = False,
    ) -> int:
        """Push a group message event as ``user_id``; returns its message id. ``at_self`` @-mentions
        the bot first (the Hermes bridge answers a group only when mentioned)."""
        event = self._message_event(text, user_id, nickname)
        if at_self:
            event["message"].insert(0, {"type": "at", "data": {"qq": str(self.self_id)}})
        event.update(message_type="group", sub_type="normal", group_id=group_id, anonymous=None)
        event["sender"]["role"] = role
        self.roles[user_id] = role
        await self._push(event)
        return event["message_id"]

    async def send_private_message(self, text: str, user_id: int, nickname: str = "friend") -> int:
        event = self._message_event(text, user_id, nickname)
        event.update(message_type="private", sub_type="friend", target_id=self.self_id)
        await self._push(event)
        return event["message_id"]

    # --- what the bot did -----------------------------------------------------------------------

    async def expect_action(self, timeout: float = 10, action: str | None = None) -> Action:
        """The bot's next action (optionally the next one named ``action``, skipping others)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                got = await asyncio.wait_for(self._queue.get(), max(remaining, 0))
            except TimeoutError:
                wanted = f" {action!r}" if action else ""
                raise AssertionError(f"the bot took no action{wanted} within {timeout}s") from None
            if action is None or got.action == action:
                return got

    async def expect_no_action(self, seconds: float = 2) -> None:
        """Fail if the bot takes any action within ``seconds``."""
        try:
            got = await asyncio.wait_for(self._queue.get(), seconds)
        except TimeoutError:
            return
        raise AssertionError(f"expected no action, but the bot called {got.action} with {got.params}")
