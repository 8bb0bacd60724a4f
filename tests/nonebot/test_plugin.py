"""The package loads as a real NoneBot plugin, with its metadata and config."""

from __future__ import annotations


def test_plugin_is_loaded_with_metadata(nonebug_init):
    import nonebot

    from nonebot_plugin_history_recall.config import Config

    plugin = nonebot.get_plugin("nonebot_plugin_history_recall")

    assert plugin is not None and plugin.metadata is not None
    assert plugin.metadata.type == "application"
    assert plugin.metadata.config is Config
    assert "/recall" in (plugin.metadata.usage or "")
    assert "/move" not in (plugin.metadata.usage or "")  # admin commands stay unadvertised
    # the store page lists what a member can do: dates and opening a hit, not only the query
    for option in ("--after", "--before", "--open", "--mode", "--limit"):
        assert option in (plugin.metadata.usage or "")
    assert plugin.metadata.supported_adapters and "nonebot.adapters.onebot.v11" in plugin.metadata.supported_adapters
    assert {m.module_name for m in plugin.matcher} >= {
        "nonebot_plugin_history_recall.handlers.recall",
        "nonebot_plugin_history_recall.handlers.admin",
    }
