"""The model the stateful privacy test (``test_rules_stateful.py``) checks recall against: what each
member said, in which chat, when, and which rules the group set — never Hermes' rows.

Every turn carries a word of its own (a *token*), so "is it findable" is "does the token show".
The rules, as ``docs/security.md`` states them:

- a forget takes out turns — who said what in which chat — and every other turn with the same words
  by the same author in that chat (a turn whose author cannot be told matches any author);
- a turn said (its original) while recall was off in its chat, or while its author was opted out,
  is out; so is a turn whose author cannot be told (a shared session without the sender tag)
  said while any member of that chat was opted out;
- the agent's answer goes with the member's turn it answers;
- the operator's own turns in a branch of a chat are never in a chat's recall.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OPERATOR = "@operator"


@dataclass
class Said:
    token: str
    chat: str | None  # None: the operator's own turn
    author: str  # member id; "" when nobody can tell; OPERATOR
    role: str
    text: str  # the row's content
    when: float
    session: str
    exchange: int  # index of the user turn this one answers (itself for a user turn)
    rewound: bool = False

    def key(self) -> tuple[str | None, str, str]:
        return (self.chat, self.role, self.text.strip())


@dataclass
class Span:
    kind: str  # "off" | "optout"
    chat: str
    member: str
    since: float
    until: float | None = None

    def covers(self, when: float) -> bool:
        return self.since <= when and (self.until is None or when < self.until)


@dataclass
class Model:
    said: list[Said] = field(default_factory=list)
    forgotten: dict[tuple[str | None, str, str], set[str]] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)
    lineage: dict[str, str] = field(default_factory=dict)  # session → its conversation's first session
    off: set[str] = field(default_factory=set)

    # -- what is out ---------------------------------------------------------------------------
    def out(self, s: Said) -> bool:
        if s.chat is None:
            return False
        authors = self.forgotten.get(s.key(), set())
        if s.author in authors or (authors and s.author == ""):
            return True
        return any(span.chat == s.chat and span.covers(s.when)
                   and (span.kind == "off" or s.author in (span.member, ""))
                   for span in self.spans)

    def visible(self, s: Said) -> bool:
        return not s.rewound and not self.out(s)

    def carriers(self, token: str) -> list[Said]:
        return [s for s in self.said if s.token == token]

    def private(self, chat: str) -> set[str]:
        """Tokens of ``chat`` that must show nowhere: every turn saying them is out."""
        tokens = {s.token for s in self.said if s.chat == chat}
        return {t for t in tokens if all(self.out(s) for s in self.carriers(t))}

    def findable(self, chat: str) -> set[str]:
        """Tokens of ``chat`` that must show in its recall (while it is on)."""
        return {s.token for s in self.said if s.chat == chat and self.visible(s)}

    def operator_tokens(self) -> set[str]:
        return {s.token for s in self.said if s.chat is None}

    # -- forgetting: which turns each form names -------------------------------------------------
    def with_answers(self, users: list[Said]) -> list[Said]:
        wanted = {self.said.index(u) for u in users}
        return [s for s in self.said if s.exchange in wanted and self.visible(s)]

    def forget(self, turns: list[Said]) -> None:
        for s in turns:
            self.forgotten.setdefault(s.key(), set()).add(s.author)

    def members_turns(self, chat: str, member: str, after: float | None = None,
                      before: float | None = None) -> list[Said]:
        users = [s for s in self.said if s.chat == chat and s.role == "user" and s.author == member
                 and self.visible(s) and (after is None or s.when >= after) and (before is None or s.when < before)]
        return self.with_answers(users)

    def chat_turns(self, chat: str, before: float) -> list[Said]:
        return [s for s in self.said if s.chat == chat and self.visible(s) and s.when < before]

    def conversation_turns(self, session: str) -> list[Said]:
        root = self.lineage.get(session, session)
        return [s for s in self.said if self.lineage.get(s.session, s.session) == root and self.visible(s)]

    # -- spans -------------------------------------------------------------------------------------
    def open_span(self, kind: str, chat: str, member: str, since: float) -> None:
        if not any(s.kind == kind and s.chat == chat and s.member == member and s.until is None for s in self.spans):
            self.spans.append(Span(kind, chat, member, since))

    def close_span(self, kind: str, chat: str, member: str, until: float) -> None:
        for span in self.spans:
            if span.kind == kind and span.chat == chat and span.member == member and span.until is None:
                span.until = until

    def opted_out(self, chat: str) -> set[str]:
        return {s.member for s in self.spans if s.kind == "optout" and s.chat == chat and s.until is None}
