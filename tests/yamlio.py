"""YAML for the tests without PyYAML, which Hermes 0.22 does not bring (and the plugin does not need).

Reading goes through the plugin's own reader (Hermes' ``hermes_yaml`` on 0.22, PyYAML on 0.19), so a
test parses a file exactly as the plugin does; writing emits JSON, which every YAML reader accepts."""

from __future__ import annotations

import json
from typing import Any

from hermes_side.host.config import yaml_reader


def safe_load(text: str | bytes) -> Any:
    return yaml_reader()[0](text)


def safe_dump(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
