"""The adapters the NoneBot store lists: a plugin may claim only these (the store's publish check,
nonebot/noneflow ``PluginPublishInfo.supported_adapters_validator``, rejects any other name).

Copied from the store's registry (nonebot/registry ``adapters.json``, read 2026-12-02, commit
04c9bf18): every ``module_name`` in it. ``tests/packaging/store_adapters.json`` holds the same read
with its source, and tests/packaging keeps the two equal; refresh both when the store adds one.
"""

STORE_ADAPTERS = frozenset({
    "nonebot.adapters.bilibili",
    "nonebot.adapters.bilibili_live",
    "nonebot.adapters.console",
    "nonebot.adapters.ding",
    "nonebot.adapters.discord",
    "nonebot.adapters.dodo",
    "nonebot.adapters.efchat",
    "nonebot.adapters.feishu",
    "nonebot.adapters.gewechat",
    "nonebot.adapters.github",
    "nonebot.adapters.heybox",
    "nonebot.adapters.kaiheila",
    "nonebot.adapters.kritor",
    "nonebot.adapters.mail",
    "nonebot.adapters.milky",
    "nonebot.adapters.minecraft",
    "nonebot.adapters.mirai",
    "nonebot.adapters.ntchat",
    "nonebot.adapters.onebot.v11",
    "nonebot.adapters.onebot.v12",
    "nonebot.adapters.qq",
    "nonebot.adapters.red",
    "nonebot.adapters.rocketchat",
    "nonebot.adapters.satori",
    "nonebot.adapters.telegram",
    "nonebot.adapters.villa",
    "nonebot.adapters.vocechat",
    "nonebot.adapters.wxclaw",
    "nonebot.adapters.wxmp",
    "nonebot.adapters.yunhu",
    "nonebot_adapter_tailchat",
    "nonebot_adapter_walleq",
    "yunhu",
})
