"""Files the plugin keeps live in its own localstore data dir (the NoneBot store's rule).

Paths are resolved on call, never at import: localstore must know the calling plugin, and the
directory can be moved with ``LOCALSTORE_DATA_DIR`` or per plugin with
``LOCALSTORE_PLUGIN_DATA_DIR='{"nonebot_plugin_history_recall": "/path"}'``.
"""

from __future__ import annotations

from pathlib import Path

import nonebot_plugin_localstore as localstore


def data_file(name: str) -> Path:
    """``name`` (a bare file name, e.g. ``"last_results.json"``) in the plugin's data dir, which exists."""
    if not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(f"not a bare file name: {name!r}")
    return localstore.get_plugin_data_file(name)
