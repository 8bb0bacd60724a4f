#!/usr/bin/env python3
"""Deterministic synthetic Hermes history for the latency/scale benchmark.

Writes ``$HOME_DIR/state.db`` and ``$HOME_DIR/projects.db`` **through Hermes' own code**
(``hermes_state.SessionDB`` and ``hermes_cli.projects_db``), so every row goes through Hermes'
INSERT paths and its FTS triggers (``messages_fts`` + ``messages_fts_trigram``).

    python -m benchmarks synth --home DIR --messages 1000000 --conversations 5000 \
        --projects 50 --seed 1

What ends up in DIR (all deterministic for a given seed and size; see benchmarks/README.md):

* ``work/...``            real folders: explicit project folders (some ``git init``-ed) and
                          unregistered git repos ("auto" projects).
* ``projects.db``         explicit projects (``projects_db.create_project``, 1-3 folders each).
* ``state.db``            sessions + messages: cli/tui sessions in project folders, tui sessions in
                          unregistered repos (``update_session_cwd(sid, cwd, branch, root)``), Home
                          sessions without cwd (``api_server``/``telegram``), compression lineages
                          (2-3 sessions, children without cwd, parents ``end_reason='compression'``),
                          in-place compaction (``archive_and_compact``), rewinds
                          (``rewind_to_message``), archived conversations (``set_session_archived``),
                          delegate subagent sessions, tool rows; timestamps spread over 2025.
* ``synth_manifest.json`` projects with counts, scope buckets ``{"1k","10k","100k"}``, planted facts.
* ``synth_queries.json``  ~200 queries (en/zh; common, keywords, questions, rare terms, mixed).

Write paths (``--write-mode``):

* ``import`` (default): ``SessionDB.import_sessions`` (Hermes' bulk restore API: one write
  transaction per batch of <=500 sessions / <=50k messages, rows inserted by Hermes'
  ``_insert_message_rows`` so triggers/FTS run normally). It also takes ``started_at``,
  ``ended_at``, ``end_reason``, ``cwd``, ``title``, ``parent_session_id`` and ``archived`` so the
  session rows carry realistic historical times.
* ``append``: the live path, one Hermes call per row: ``create_session`` / ``append_message`` /
  ``end_session`` / ``set_session_title``. Same content; ``started_at``/``ended_at`` are wall-clock
  because those Hermes methods take no time argument. ~1.5k rows/s on 2 cores and it slows down as
  the FTS index grows (Hermes runs an FTS ``optimize`` every 1000 writes) — use it for small sizes.

Either way the post-processing goes through Hermes methods: ``update_session_cwd``,
``record_gateway_session_peer``, ``rewind_to_message``, ``archive_and_compact``, ``append_message``,
``set_session_archived``. No SQL is written to state.db by this script.

Nothing in Hermes is patched: project ids are the ones ``create_project`` draws (random on every
Hermes line — 0.19's private ``_new_project_id`` is gone in 0.22), and the manifest records them.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

YEAR_START = 1735689600.0  # 2025-01-01T00:00:00Z
YEAR_SECONDS = 365 * 86400.0
MAX_SESSION_ROWS = 5000  # import_sessions caps a session at 10k rows / 5 MB; stay well below
SUMMARY_PREFIX_FALLBACK = "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below."

# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

TOPICS: dict[str, dict[str, list[str]]] = {
    "database": {
        "en": ["database", "migration", "schema", "index", "query", "transaction", "replica", "table",
               "column", "lock", "connection pool", "backfill", "vacuum", "foreign key"],
        "zh": ["数据库", "迁移脚本", "索引", "慢查询", "事务", "主键", "外键", "数据表", "连接池", "死锁"],
    },
    "auth": {
        "en": ["token", "session", "login", "password", "permission", "role", "certificate", "secret",
               "oauth flow", "refresh token", "api key", "audit log"],
        "zh": ["登录页", "令牌", "权限", "证书", "密钥", "验证码", "注册流程", "会话", "审计日志"],
    },
    "deploy": {
        "en": ["deploy", "release", "rollback", "pipeline", "build", "container", "image", "cluster",
               "helm chart", "canary", "staging", "artifact"],
        "zh": ["部署脚本", "灰度发布", "回滚", "流水线", "镜像", "容器", "集群", "安装包", "发版"],
    },
    "frontend": {
        "en": ["component", "layout", "button", "form", "modal", "sidebar", "theme", "font", "bundle",
               "router", "state store", "dark mode"],
        "zh": ["前端页面", "弹窗", "按钮", "表单", "侧边栏", "主题色", "字体", "组件", "样式"],
    },
    "billing": {
        "en": ["invoice", "ledger", "payment", "refund", "subscription", "quota", "pricing", "coupon",
               "tax rate", "currency", "receipt"],
        "zh": ["账单", "支付", "退款", "计费", "订阅", "配额", "优惠券", "发票", "对账"],
    },
    "search": {
        "en": ["search", "ranking", "filter", "pagination", "cursor", "tokenizer", "embedding", "vector",
               "recall", "reranker", "synonym list", "snippet"],
        "zh": ["搜索功能", "排序", "分页", "召回率", "向量库", "嵌入", "分词", "同义词", "摘要"],
    },
    "ml": {
        "en": ["model", "prompt", "dataset", "checkpoint", "gradient", "optimizer", "batch", "epoch",
               "tensor", "eval set", "learning rate", "fine-tune"],
        "zh": ["模型", "提示词", "数据集", "训练", "微调", "评测集", "学习率", "推理", "显存"],
    },
    "infra": {
        "en": ["server", "node", "volume", "bucket", "firewall", "proxy", "gateway", "dns record",
               "load balancer", "disk", "backup", "snapshot"],
        "zh": ["服务器", "节点", "负载均衡", "防火墙", "域名", "存储桶", "备份", "快照", "磁盘", "网关"],
    },
    "mobile": {
        "en": ["app", "push notification", "deep link", "crash report", "release build", "simulator",
               "permission prompt", "offline cache", "webview"],
        "zh": ["小程序", "消息推送", "安装包", "崩溃日志", "离线缓存", "二维码", "启动页", "权限弹窗"],
    },
    "pipeline": {
        "en": ["etl job", "scheduler", "queue", "worker", "partition", "stream", "exporter", "importer",
               "cron job", "dead letter queue", "batch window"],
        "zh": ["定时任务", "队列", "任务", "数据同步", "导出", "导入", "分区", "消费者", "重试队列"],
    },
    "observability": {
        "en": ["metric", "alert", "dashboard", "trace", "span", "log level", "sampling rate",
               "error budget", "latency", "heartbeat"],
        "zh": ["监控", "告警", "仪表盘", "链路追踪", "日志级别", "延迟", "吞吐量", "采样率", "心跳"],
    },
    "testing": {
        "en": ["test", "fixture", "mock", "benchmark", "coverage", "flaky test", "snapshot test",
               "test runner", "assertion", "ci job"],
        "zh": ["测试用例", "单元测试", "集成测试", "压测", "覆盖率", "断言", "测试环境", "用例"],
    },
}

GENERIC_NOUNS = [
    "config", "cache", "request", "response", "payload", "service", "endpoint", "handler", "module",
    "package", "dependency", "version", "parser", "buffer", "stream", "thread", "process", "memory",
    "plugin", "webhook", "template", "timeout", "retry", "limit", "user", "account", "tenant", "file",
    "directory", "script", "function", "class", "interface", "error", "warning", "log", "message",
    "event", "callback", "job", "task", "worker", "client", "socket", "port", "path", "setting",
    "environment variable", "feature flag", "changelog", "readme", "docstring", "type hint",
]

JARGON = [
    "idempotent", "debounce", "monotonic", "quorum", "tombstone", "hysteresis", "backpressure",
    "jitter", "sharding", "lease", "fencing", "watermark", "compaction", "memoization", "hydration",
    "tree-shaking", "thundering herd", "head-of-line blocking", "write amplification", "cardinality",
    "fan-out", "circuit breaker", "bulkhead", "exponential backoff", "read-your-writes", "linearizable",
    "eventual consistency", "two-phase commit", "outbox pattern", "saga", "copy-on-write", "mmap",
    "zero-copy", "epoll", "coroutine", "green thread", "GIL", "refcount", "weakref", "finalizer",
    "arena allocator", "bloom filter", "skiplist", "trie", "LSM tree", "B-tree", "WAL", "fsync",
    "checksum", "CRC32", "varint", "protobuf", "msgpack", "base64", "UTF-8", "BOM", "NFC normalization",
    "surrogate pair", "timezone offset", "leap second", "clock skew", "NTP drift", "TTL", "LRU",
    "ARC cache", "prefetch", "cold start", "warm pool", "autoscaler", "HPA", "cgroup", "OOM killer",
    "seccomp", "SELinux", "mTLS", "SNI", "HSTS", "CORS", "CSRF token", "XSS", "SQL injection",
    "rate limiter", "token bucket", "leaky bucket", "sliding window", "p99", "tail latency", "SLO",
]

TECH = [
    "PostgreSQL", "SQLite", "Redis", "Kafka", "RabbitMQ", "Elasticsearch", "ClickHouse", "MySQL",
    "MongoDB", "S3", "Docker", "Kubernetes", "Terraform", "Nginx", "gRPC", "GraphQL", "FastAPI",
    "Django", "Flask", "React", "Vue", "TypeScript", "Rust", "Go", "Python", "numpy", "pandas",
    "PyTorch", "ONNX", "FAISS", "Celery", "Airflow", "Prometheus", "Grafana", "Sentry",
    "OpenTelemetry", "GitHub Actions", "Jenkins", "uvicorn", "asyncio", "pytest", "ruff", "mypy",
    "webpack", "Vite", "Tailwind", "SQLAlchemy", "Alembic", "Pydantic", "httpx", "aiohttp", "Ollama",
    "vLLM", "DuckDB", "MinIO", "etcd", "Consul", "Envoy", "Caddy", "systemd", "tmux", "Playwright",
]

VERBS = [  # (base, past, 3rd person)
    ("fix", "fixed", "fixes"), ("refactor", "refactored", "refactors"), ("migrate", "migrated", "migrates"),
    ("deploy", "deployed", "deploys"), ("add", "added", "adds"), ("remove", "removed", "removes"),
    ("rename", "renamed", "renames"), ("split", "split", "splits"), ("merge", "merged", "merges"),
    ("cache", "cached", "caches"), ("retry", "retried", "retries"), ("validate", "validated", "validates"),
    ("parse", "parsed", "parses"), ("load", "loaded", "loads"), ("save", "saved", "saves"),
    ("sync", "synced", "syncs"), ("flush", "flushed", "flushes"), ("reset", "reset", "resets"),
    ("update", "updated", "updates"), ("upgrade", "upgraded", "upgrades"), ("patch", "patched", "patches"),
    ("revert", "reverted", "reverts"), ("optimize", "optimized", "optimizes"), ("profile", "profiled", "profiles"),
    ("debug", "debugged", "debugs"), ("index", "indexed", "indexes"), ("rebuild", "rebuilt", "rebuilds"),
    ("compress", "compressed", "compresses"), ("encode", "encoded", "encodes"), ("decode", "decoded", "decodes"),
    ("serialize", "serialized", "serializes"), ("normalize", "normalized", "normalizes"),
    ("sanitize", "sanitized", "sanitizes"), ("schedule", "scheduled", "schedules"), ("cancel", "cancelled", "cancels"),
    ("throttle", "throttled", "throttles"), ("batch", "batched", "batches"), ("stream", "streamed", "streams"),
    ("export", "exported", "exports"), ("import", "imported", "imports"), ("backfill", "backfilled", "backfills"),
    ("shard", "sharded", "shards"), ("replicate", "replicated", "replicates"), ("verify", "verified", "verifies"),
    ("handle", "handled", "handles"), ("wrap", "wrapped", "wraps"), ("mock", "mocked", "mocks"),
    ("test", "tested", "tests"), ("benchmark", "benchmarked", "benchmarks"), ("document", "documented", "documents"),
    ("deprecate", "deprecated", "deprecates"), ("delete", "deleted", "deletes"), ("create", "created", "creates"),
    ("fetch", "fetched", "fetches"), ("send", "sent", "sends"), ("publish", "published", "publishes"),
    ("render", "rendered", "renders"), ("compile", "compiled", "compiles"), ("bundle", "bundled", "bundles"),
    ("lint", "linted", "lints"), ("format", "formatted", "formats"), ("register", "registered", "registers"),
    ("resolve", "resolved", "resolves"), ("dispatch", "dispatched", "dispatches"), ("evict", "evicted", "evicts"),
    ("paginate", "paginated", "paginates"), ("truncate", "truncated", "truncates"), ("rotate", "rotated", "rotates"),
]

ADJS = [
    "slow", "flaky", "stale", "empty", "missing", "broken", "duplicated", "corrupted", "large", "small",
    "nested", "async", "concurrent", "cold", "partial", "legacy", "new", "default", "custom", "invalid",
    "expired", "locked", "idle", "orphaned", "unbounded", "noisy", "cached", "pending", "retried",
    "unicode", "multi-tenant", "read-only", "sharded", "encrypted", "compressed", "nightly", "hot",
]

CAMEL_SUFFIXES = ["Manager", "Service", "Handler", "Client", "Factory", "Builder", "Loader", "Parser",
                  "Worker", "Store", "Repository", "Controller", "Validator", "Serializer", "Adapter",
                  "Provider", "Registry", "Resolver", "Scheduler", "Watcher", "Gateway", "Indexer"]

EXCEPTIONS = [
    "KeyError", "ValueError", "TypeError", "TimeoutError", "ConnectionResetError", "PermissionError",
    "FileNotFoundError", "IntegrityError", "OperationalError", "RuntimeError", "AssertionError",
    "IndexError", "AttributeError", "JSONDecodeError", "UnicodeDecodeError", "MemoryError",
    "RecursionError", "ImportError", "ModuleNotFoundError", "OSError", "BrokenPipeError",
    "CancelledError", "ValidationError", "HTTPError", "SSLError", "NotImplementedError",
]

ERRNO = ["ECONNREFUSED", "ETIMEDOUT", "ENOSPC", "EADDRINUSE", "EPIPE", "ECONNRESET", "EACCES",
         "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CORRUPT", "OOMKilled", "CrashLoopBackOff",
         "ImagePullBackOff", "HTTP 502", "HTTP 503", "HTTP 429", "HTTP 401", "HTTP 404", "exit code 137"]

TOOL_NAMES = ["terminal", "read_file", "search_files", "patch", "write_file", "web_search", "browser_navigate"]

MODELS = ["anthropic/claude-sonnet-4", "openai/gpt-4.1", "qwen/qwen3-coder", "deepseek/deepseek-chat",
          "google/gemini-2.5-pro", "moonshotai/kimi-k2"]

EN_CODENAMES = [
    "Atlas", "Falcon", "Orion", "Nimbus", "Cobalt", "Juniper", "Helix", "Quasar", "Sable", "Tundra",
    "Vertex", "Willow", "Zephyr", "Aurora", "Basalt", "Cedar", "Delta", "Ember", "Fjord", "Granite",
    "Harbor", "Iris", "Jasper", "Kestrel", "Lumen", "Mistral", "Nova", "Onyx", "Pylon", "Quill",
    "Raven", "Sierra", "Talon", "Umber", "Vela", "Wren", "Xenon", "Yarrow", "Zenith", "Acorn",
    "Beacon", "Comet", "Dune", "Echo", "Flint", "Glacier", "Heron", "Indigo", "Jolt", "Kite",
    "Lark", "Maple", "Nectar", "Opal", "Pebble", "Quartz", "Ridge", "Spruce", "Tern", "Vortex",
]

ZH_NOUNS = [
    "数据库", "索引", "缓存", "配置文件", "接口", "服务器", "日志", "用户表", "权限", "部署脚本",
    "测试用例", "迁移脚本", "订单", "支付", "账单", "队列", "任务", "定时任务", "网关", "证书",
    "密钥", "令牌", "会话", "前端页面", "后端服务", "搜索功能", "排序", "分页", "模型", "向量库",
    "嵌入", "提示词", "数据集", "监控", "告警", "仪表盘", "链路追踪", "容器", "镜像", "集群",
    "节点", "负载均衡", "防火墙", "域名", "存储桶", "备份", "快照", "版本号", "分支", "合并请求",
    "代码审查", "单元测试", "集成测试", "压测", "性能", "内存", "线程池", "连接池", "超时设置", "重试逻辑",
    "限流", "熔断", "降级方案", "灰度发布", "文档", "需求", "设计稿", "接口文档", "字段", "事务",
    "慢查询", "报表", "导出功能", "插件", "依赖", "安装包", "流水线", "环境变量", "错误码", "消息推送",
    "通知", "邮件", "推荐", "权重", "延迟", "吞吐量", "磁盘", "配额", "计费", "退款", "库存",
    "购物车", "多语言", "时区", "主题色", "侧边栏", "弹窗", "表单", "验证码", "小程序",
]

ZH_VERBS = ["修改", "优化", "回滚", "部署", "排查", "重构", "升级", "迁移", "合并", "拆分", "删除",
            "新增", "调整", "替换", "重启", "清理", "压缩", "备份", "恢复", "同步", "校验", "上线",
            "下线", "监控", "记录", "封装", "改写", "补充", "统一", "配置", "初始化", "重建", "扩容",
            "缩容", "限制", "隔离", "发布", "打包", "编译", "调试", "复现", "定位", "修复", "验证"]

ZH_PROBLEMS = ["报错", "超时", "卡住", "内存泄漏", "数据不一致", "偶发失败", "返回空结果", "乱码", "重复写入",
               "丢消息", "响应很慢", "启动失败", "权限不足", "连接被拒绝", "磁盘满了", "死锁", "版本冲突",
               "找不到文件", "格式不对", "时区错了", "排序不对", "分页错乱", "缓存没失效", "签名校验失败",
               "证书过期", "端口被占用", "依赖冲突", "编码错误", "测试不稳定", "构建失败", "内存占用过高"]

ZH_TIMES = ["昨天", "今天上午", "上周", "上个月", "刚才", "前两天", "周五", "发版前", "下个版本", "这周内",
            "月底前", "晚上", "明天一早", "上次开会的时候", "迭代结束前"]

ZH_REASONS = [
    "因为现在的方案扛不住高峰流量", "因为旧接口马上要下线", "为了兼容老版本客户端", "这样排查问题更方便",
    "避免每次都全量重建", "因为测试环境和生产环境配置不一致", "为了减少一次网络往返", "因为上游改了返回格式",
    "这样回滚的时候不用停服", "为了让日志里能看到完整的调用链", "因为磁盘空间不够了", "考虑到后面还要支持多租户",
    "因为这个库已经不维护了", "这样新人上手更容易", "免得每次发版都要手动改配置",
]

ZH_FILLERS = ["好的，谢谢。", "明白了。", "可以，就这么办。", "收到，我晚点再看。", "先这样吧。", "辛苦了！",
              "没问题。", "我再确认一下。", "行，那先合进去。", "嗯，这个思路没问题。"]

EN_FILLERS = ["Thanks, that works now.", "Sounds good.", "OK, let's ship it.", "Got it.", "Perfect, thanks!",
              "Makes sense.", "Let me try that.", "Great, merging.", "Hmm, not quite.", "That fixed it."]

EN_REASONS = [
    "because the current setup cannot handle peak traffic", "since the old endpoint is going away",
    "to stay compatible with older clients", "so debugging is easier", "to avoid a full rebuild every time",
    "because staging and production configs drifted", "to save one network round trip",
    "because upstream changed the response format", "so rollbacks do not need downtime",
    "to keep the full call chain in the logs", "because the disk is almost full",
    "since we need multi-tenant support later", "because that library is unmaintained",
]

ZH_CODE_PREFIX = ["青鸾", "赤霄", "玄铁", "白露", "金乌", "银河", "星火", "云雀", "海棠", "山岚", "风铃",
                  "雷鸣", "琥珀", "翡翠", "北极", "天穹", "长河", "松烟", "竹影", "墨羽", "紫电", "霜降"]
ZH_CODE_SUFFIX = ["平台", "中台", "引擎", "助手", "系统", "服务", "工作台", "看板"]
# Reserved for planted facts only: never produced by the general generator.
ZH_PLANT_PREFIX = ["朱雀", "玄武", "麒麟", "饕餮", "鲲鹏", "烛龙", "白泽", "毕方", "九尾", "重明", "貔貅", "獬豸"]
ZH_PLANT_SUFFIX = ["网关", "调度器", "索引器", "协议", "管线", "总线", "沙箱", "探针"]

TEAMS = ["core", "web", "data", "infra", "mobile", "research", "platform", "tools"]
SUBDIRS = ["src", "tests", "docs", "scripts", "services/api"]

# --- templates ------------------------------------------------------------------------------

EN_USER = [
    "Can you check why {id} fails with {err} when the {n} is {adj}?",
    "How do we {v} the {n} in {path} without breaking the {n2}?",
    "The {n} {vp} again after the last deploy, see {err} in the logs.",
    "Let's {v} {id} to use {tech} instead of {tech2}.",
    "Please add a test for {id} covering the {adj} {n} case.",
    "Why is the {n} so slow on {tech}? p99 went from {num}ms to {num2}ms.",
    "I keep getting {exc}: {err} from {cls} — any idea?",
    "Is the {jar} approach worth it for the {n} or is it overkill?",
    "We need to {v} the {n} before the {n2} release. What's the plan?",
    "Can you review the change to {path}? I'm not sure about the {n} handling.",
    "What did we end up doing with the {adj} {n} problem?",
    "Should {cls} own the {n}, or should the {n2} stay in {id}?",
    "Run the {n} tests again, I think {id} is {adj}.",
    "Summarize what changed in {cls} since {ver}.",
    "How much {n} does {tech} need for {num} {n2} entries?",
    "The {code} {n} is throwing {err} on startup, can you look?",
]

EN_ASSIST = [
    "I looked at {path} and the problem is that {id} {vs} the {n} before the {n2} is ready.",
    "The fix is in {path}: {id} now retries {small} times with {jar} and a {num}ms cap.",
    "Running the suite again: {num} passed, {small} failed ({err}).",
    "I {vp} the {n} and moved the {n2} handling into {cls}.",
    "This looks like a {jar} issue: the {n} is {adj} while {cls} is still holding the {n2}.",
    "{tech} handles this fine if we {v} the {n} first; {tech2} would need a custom {n2}.",
    "The {exc} comes from {id} at line {num}; the {n} argument can be {adj}.",
    "I'd keep the {n} in {tech} for now and {v} the {n2} later, {reason}.",
    "Done. {cls} no longer {vs} the {n} on every request, so latency dropped to {small}ms.",
    "There are two options: {v} the {n} in {id}, or make {cls} {jar}. The first is simpler.",
    "I checked the logs from {ver}: the {err} started right after the {n} change in {sha}.",
    "The {n} config lives in {path}; the default {n2} limit is {num}.",
    "Note that {id} is called from {small} places, so renaming it touches the {n2} too.",
    "I added a regression test for the {adj} {n} case in tests/test_{snake}.py.",
    "The {code} {n} now goes through {cls}, which keeps the {jar} behaviour we wanted.",
]

EN_CODE = [
    "```python\ndef {snake}({n1w}, timeout={small}):\n    result = {snake2}({n1w})\n    if not result:\n"
    "        raise {exc}(\"{err}\")\n    return result\n```",
    "```bash\n$ pytest tests/test_{snake}.py -q\n{num} passed, {small} failed in {small}.{small}s\n```",
    "```yaml\n{n1w}:\n  backend: {tech}\n  max_{n1w2}: {num}\n  retry: {small}\n```",
    "```sql\nSELECT {n1w}, count(*) FROM {n1w2} WHERE status = '{adj}' GROUP BY {n1w};\n```",
]

ZH_USER = [
    "{id} 又报 {err} 了，是不是{zn}的问题？",
    "上次{zn}{zv}的方案最后怎么定的？",
    "帮我看一下{zn}为什么{zp}。",
    "我们要不要把{zn}{zv}到 {tech}？",
    "{zt}{zn}{zp}了，能查一下原因吗？",
    "{zcode}的{zn}能不能先{zv}一下？",
    "{path} 里的{zn}逻辑我没看懂，能解释一下吗？",
    "这个{zn}{zp}的问题会影响{zn2}吗？",
    "帮我写个脚本，把{zn}{zv}到{zn2}里。",
    "{zt}说的{zc}，现在进展怎么样了？",
    "为什么 {cls} 每次都要{zv}{zn}？",
    "{zn}和{zn2}是不是应该拆开？",
]

ZH_ASSIST = [
    "我查了一下 {path}，问题出在{zn}{zp}，{id} 在{zn2}还没准备好的时候就被调用了。",
    "已经把{zn}{zv}完成，{num} 个测试全部通过。",
    "结论是先{zv}{zn}，{zn2}暂时保持不变，下个版本再{zv2}。",
    "原因找到了：{zc}{zp}，{zr}，所以我在 {cls} 里加了一层校验。",
    "{zn}现在改成用 {tech} 了，{zr}。",
    "我看了日志，{err} 是从 {id} 抛出来的，和{zn}无关。",
    "这个问题{zt}也出现过，当时是{zn}{zp}，{zv}之后就好了。",
    "建议把{zn}{zv}一下，{zr}。",
    "{zcode}这边我已经{zv}了{zn}，{zn2}还需要你确认。",
    "改动在 {path}，主要是把{zc}的逻辑挪到了 {cls}。",
    "测试结果：{num} 个通过，{small} 个失败，失败的都是{zn}相关的用例（{err}）。",
    "{zn}的{zn2}上限目前是 {num}，如果要调大需要同时{zv}{zn3}。",
]

TOOL_OUT = {
    "terminal": [
        "$ pytest tests/test_{snake}.py -q\n{num} passed, {small} failed in {small}.{small}s\n"
        "FAILED tests/test_{snake}.py::test_{v}_{n1w} - {exc}: {err}",
        "Traceback (most recent call last):\n  File \"{path}\", line {num}, in {snake}\n    {snake2}({n1w})\n"
        "{exc}: {err} ({adj} {n})",
        "$ git log --oneline -3\n{sha} {vp} {n} in {cls}\n{sha2} {v} {id}\n{sha3} bump {tech} to {ver}",
        "$ docker ps\nCONTAINER ID   IMAGE            STATUS\n{sha}   {n1w}:{ver}   Up {small} hours",
        "error: {err}\n  --> {path}:{num}:{small}\n   = note: {n} is {adj}",
    ],
    "read_file": [
        "{num}| def {snake}({n1w}):\n{num2}|     \"\"\"{V} the {n}.\"\"\"\n{num3}|     return {cls}({n1w}).{v}()",
        "{num}| class {cls}:\n{num2}|     max_{n1w} = {small}\n{num3}|     backend = \"{tech}\"",
    ],
    "search_files": [
        "{path}:{num}: def {snake}(\n{path2}:{num2}:     {snake}({n1w})\n{path3}:{num3}: # TODO {v} {n}",
        "{path}:{num}:     raise {exc}(\"{err}\")",
    ],
    "patch": ["Applied patch to {path}: +{small} -{small2} lines", "Patched {path} ({small} hunks)"],
    "write_file": ["Wrote {num} bytes to {path}"],
    "web_search": ["1. {tech} docs — {V} the {n} ({tech}.org)\n2. GitHub issue #{num}: {exc} when {n} is {adj}\n"
                   "3. Stack Overflow: how to {v} {n} in {tech2}"],
    "browser_navigate": ["Page title: {tech} — {V} {n} | Docs\n{num} words, {small} code blocks"],
}

TOOL_CALL_INTRO_EN = ["Let me check {path}.", "Running the tests.", "Searching for {id}.", "Let me look at the logs.",
                      "I'll patch {path}.", "Checking the {tech} docs.", ""]
TOOL_CALL_INTRO_ZH = ["我先看一下 {path}。", "跑一下测试。", "搜一下 {id} 的调用点。", "我看看日志。", ""]


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


class Zipf:
    """Items in rank order; pick() draws rank r with probability ~ 1/r^s."""

    __slots__ = ("items", "cw", "total", "n")

    def __init__(self, items, s: float = 1.05):
        self.items = list(items)
        self.n = len(self.items)
        acc = 0.0
        cw = []
        for r in range(1, self.n + 1):
            acc += 1.0 / (r ** s)
            cw.append(acc)
        self.cw = cw
        self.total = acc

    def pick(self, rng: random.Random):
        i = bisect.bisect_left(self.cw, rng.random() * self.total)
        return self.items[i if i < self.n else self.n - 1]


def _largest_remainder(weights: list[float], total: int, floor: int = 0) -> list[int]:
    n = len(weights)
    if n == 0:
        return []
    floor = min(floor, total // n)
    rest = total - floor * n
    s = sum(weights) or 1.0
    raw = [w / s * rest for w in weights]
    out = [int(x) for x in raw]
    order = sorted(range(n), key=lambda i: (-(raw[i] - out[i]), i))
    for i in order[: rest - sum(out)]:
        out[i] += 1
    return [o + floor for o in out]


def _fmt_dur(sec: float) -> str:
    sec = max(0, int(sec))
    if sec >= 3600:
        return f"{sec // 3600}h{(sec % 3600) // 60:02d}m"
    if sec >= 60:
        return f"{sec // 60}m{sec % 60:02d}s"
    return f"{sec}s"


def _camel(noun: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in noun.replace("-", " ").split())


def _snake(noun: str) -> str:
    return noun.replace("-", "_").replace(" ", "_")


class Vocab:
    """Global, seed-ranked vocabulary (which words are common is decided by the seed)."""

    def __init__(self, seed: int):
        rng = random.Random(f"vocab:{seed}")
        en_nouns = sorted({w for t in TOPICS.values() for w in t["en"]} | set(GENERIC_NOUNS))
        rng.shuffle(en_nouns)
        self.en_nouns = en_nouns
        self.noun = Zipf(en_nouns, 1.1)
        one_word = [n for n in en_nouns if " " not in n and "-" not in n]
        self.one_word_nouns = one_word
        self.noun1w = Zipf(one_word, 1.0)
        verbs = list(VERBS)
        rng.shuffle(verbs)
        self.verb = Zipf(verbs, 1.0)
        adjs = list(ADJS)
        rng.shuffle(adjs)
        self.adj = Zipf(adjs, 1.0)
        tech = list(TECH)
        rng.shuffle(tech)
        self.tech = Zipf(tech, 1.1)
        jar = list(JARGON)
        rng.shuffle(jar)
        self.jargon = Zipf(jar, 1.0)
        exc = list(EXCEPTIONS)
        rng.shuffle(exc)
        self.exc = Zipf(exc, 1.2)

        # Identifiers: snake_case verb_noun(+_adj) and CamelCase noun+suffix; a long Zipf tail.
        snake = [f"{v[0]}_{_snake(n)}" for v in VERBS for n in en_nouns]
        snake += [f"{v[0]}_{a.replace('-', '_')}_{_snake(n)}" for v in VERBS[:20] for a in ADJS[:15]
                  for n in one_word[:40]]
        camel = [_camel(n) + s for n in en_nouns for s in CAMEL_SUFFIXES]
        rng.shuffle(camel)
        # Reserve some CamelCase names for planted facts: the general generator never emits them.
        self.plant_camel = camel[:300]
        camel = camel[300:]
        self.snake_pool = snake
        self.camel_pool = camel
        ident = snake + camel
        rng.shuffle(ident)
        self.ident = Zipf(ident, 1.0)
        rng.shuffle(snake)
        self.snake = Zipf(snake, 1.0)
        self.camel = Zipf(camel, 1.0)
        # Error codes: E1000-E5999 general (Zipf), E6000-E9999 reserved for planted facts.
        codes = [f"E{i}" for i in range(1000, 6000)]
        rng.shuffle(codes)
        errs = codes + [f"ERR_{_snake(n).upper()}_{a.replace('-', '_').upper()}" for n in one_word for a in ADJS]
        rng.shuffle(errs)
        errs = list(ERRNO) + errs  # errno-style names are the most common ones
        self.err = Zipf(errs, 1.0)
        self.plant_codes = [f"E{i}" for i in range(6000, 10000)]
        rng.shuffle(self.plant_codes)
        self.plant_zh = [p + s for p in ZH_PLANT_PREFIX for s in ZH_PLANT_SUFFIX]
        rng.shuffle(self.plant_zh)

        zn = list(ZH_NOUNS) + sorted({w for t in TOPICS.values() for w in t["zh"]} - set(ZH_NOUNS))
        rng.shuffle(zn)
        self.zh_nouns = zn
        self.zn = Zipf(zn, 1.1)
        zv = list(ZH_VERBS)
        rng.shuffle(zv)
        self.zv = Zipf(zv, 1.0)
        zp = list(ZH_PROBLEMS)
        rng.shuffle(zp)
        self.zp = Zipf(zp, 1.0)
        compounds = [a + b for a in zn for b in zn if a != b and len(a + b) <= 7]
        rng.shuffle(compounds)
        self.zc = Zipf(compounds, 1.0)


@dataclass
class Project:
    key: str  # stable internal key, e.g. "x03"
    kind: str  # explicit | auto | home
    name: str
    slug: str | None
    pid: str | None = None
    folders: list[str] = field(default_factory=list)  # absolute
    git_folders: list[str] = field(default_factory=list)
    repo_root: str | None = None
    topics: list[str] = field(default_factory=list)
    zh_ratio: float = 0.3
    codename: str = ""
    zh_codename: str = ""
    idents: list[str] = field(default_factory=list)
    size: int = 0
    window: tuple = (0.0, 1.0)
    convs: list[Conv] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass
class Conv:
    idx: int
    project: Project
    start: float
    rows: int
    seg_rows: list[int] = field(default_factory=list)
    source: str = "cli"
    lang: str = "en"
    op: str | None = None  # rewind | compact (applies to the tip segment)
    archived: bool = False
    subagent_rows: int = 0
    cwd: str | None = None
    branch: str = ""
    repo_root: str = ""
    facts: list[dict[str, Any]] = field(default_factory=list)  # planted into segment 0
    titled: bool = False


# ---------------------------------------------------------------------------------------------
# Text generation
# ---------------------------------------------------------------------------------------------


class TextGen:
    def __init__(self, vocab: Vocab, project: Project, rng: random.Random):
        self.v = vocab
        self.p = project
        self.rng = rng
        self.topic_en = Zipf([w for t in project.topics for w in TOPICS[t]["en"]], 0.8)
        self.topic_zh = Zipf([w for t in project.topics for w in TOPICS[t]["zh"]], 0.8)
        self.proj_ident = Zipf(project.idents, 0.9) if project.idents else None
        self.used_idents: list[str] = []

    # -- slots --
    def slot(self, key: str) -> str:
        base = key.rstrip("0123456789")
        r = self.rng
        v = self.v
        if base == "n":
            return self.topic_en.pick(r) if r.random() < 0.55 else v.noun.pick(r)
        if base == "n1w":
            return v.noun1w.pick(r)
        if base == "v":
            return v.verb.pick(r)[0]
        if base == "V":
            return v.verb.pick(r)[0].capitalize()
        if base == "vp":
            return v.verb.pick(r)[1]
        if base == "vs":
            return v.verb.pick(r)[2]
        if base == "adj":
            return v.adj.pick(r)
        if base == "tech":
            return v.tech.pick(r)
        if base == "jar":
            return v.jargon.pick(r)
        if base == "exc":
            return v.exc.pick(r)
        if base == "err":
            return v.err.pick(r)
        if base == "id":
            s = self.proj_ident.pick(r) if self.proj_ident is not None and r.random() < 0.5 else v.ident.pick(r)
            if len(self.used_idents) < 64:
                self.used_idents.append(s)
            return s
        if base == "snake":
            return v.snake.pick(r)
        if base == "cls":
            if self.proj_ident is not None and r.random() < 0.3:
                s = self.proj_ident.pick(r)
                if "_" not in s:
                    return s
            return v.camel.pick(r)
        if base == "path":
            d = r.choice(("src", "app", "lib", "services/api", "tests", "pkg", "internal"))
            ext = r.choice((".py", ".py", ".py", ".ts", ".go", ".rs", ".sql", ".yaml"))
            return f"{d}/{v.noun1w.pick(r)}/{v.snake.pick(r)}{ext}"
        if base == "num":
            return str(int(10 ** r.uniform(1, 4)))
        if base == "small":
            return str(r.randint(1, 9))
        if base == "sha":
            return f"{r.getrandbits(28):07x}"
        if base == "ver":
            return f"v{r.randint(0, 4)}.{r.randint(0, 20)}.{r.randint(0, 9)}"
        if base == "reason":
            return r.choice(EN_REASONS)
        if base == "code":
            return self.p.codename
        if base == "zn":
            return self.topic_zh.pick(r) if r.random() < 0.55 else v.zn.pick(r)
        if base == "zv":
            return v.zv.pick(r)
        if base == "zp":
            return v.zp.pick(r)
        if base == "zt":
            return r.choice(ZH_TIMES)
        if base == "zr":
            return r.choice(ZH_REASONS)
        if base == "zc":
            return v.zc.pick(r)
        if base == "zcode":
            return self.p.zh_codename
        raise KeyError(key)

    def fill(self, template: str) -> str:
        return template.format_map(_Slots(self))

    # -- messages --
    def user_text(self, lang: str) -> str:
        r = self.rng
        if r.random() < 0.07:
            return r.choice(ZH_FILLERS if lang == "zh" else EN_FILLERS)
        tpl = ZH_USER if lang == "zh" else EN_USER
        out = self.fill(r.choice(tpl))
        if r.random() < 0.3:
            out += (" " if lang == "en" else "") + self.fill(r.choice(tpl))
        return out

    def assistant_text(self, lang: str) -> str:
        r = self.rng
        tpl = ZH_ASSIST if lang == "zh" else EN_ASSIST
        k = 1 + min(4, int(r.expovariate(0.6)))
        parts = [self.fill(r.choice(tpl)) for _ in range(k)]
        block = False
        if r.random() < 0.12:
            parts.append(self.fill(r.choice(EN_CODE)))
            block = True
        elif r.random() < 0.15:
            parts.append("\n".join("- " + self.fill(r.choice(tpl)) for _ in range(r.randint(2, 4))))
            block = True
        if block or len(parts) >= 3:
            return "\n\n".join(parts)
        return ("" if lang == "zh" else " ").join(parts)

    def tool_exchange(self, lang: str):
        r = self.rng
        tool = r.choice(TOOL_NAMES[:4]) if r.random() < 0.8 else r.choice(TOOL_NAMES)
        call_id = f"call_{r.getrandbits(48):012x}"
        if tool == "terminal":
            args = {"command": self.fill(r.choice(("pytest -q tests/test_{snake}.py", "git log --oneline -3",
                                                    "docker ps", "grep -rn {snake} src/",
                                                    "python -m {n1w}.{snake} --dry-run")))}
        elif tool in ("read_file", "write_file", "patch"):
            args = {"path": self.slot("path")}
        elif tool == "search_files":
            args = {"pattern": self.slot("snake"), "path": "src"}
        elif tool == "web_search":
            args = {"query": self.fill("{tech} {v} {n} {exc}")}
        else:
            args = {"url": self.fill("https://docs.{n1w}.dev/{snake}")}
        intro = self.fill(r.choice(TOOL_CALL_INTRO_ZH if lang == "zh" else TOOL_CALL_INTRO_EN))
        calls = [{"id": call_id, "type": "function",
                  "function": {"name": tool, "arguments": json.dumps(args, ensure_ascii=False)}}]
        out = self.fill(r.choice(TOOL_OUT[tool]))
        if lang == "zh" and r.random() < 0.15:
            out += "\n" + self.fill("错误：{zn}{zp}")
        return intro, calls, tool, call_id, out

    def summary_text(self, lang: str) -> str:
        r = self.rng
        idents = sorted(set(self.used_idents))[:6]
        tpl = ZH_ASSIST if lang == "zh" else EN_ASSIST
        body = [self.fill(r.choice(tpl)) for _ in range(r.randint(2, 4))]
        lines = [SUMMARY_PREFIX, "", "## Historical Task Snapshot", *body, "",
                 "## Historical Remaining Work", "- " + self.fill(r.choice(tpl))]
        if idents:
            lines += ["", "Touched identifiers: " + ", ".join(idents)]
        lines += ["", SUMMARY_END]
        return "\n".join(lines)


class _Slots(dict):
    __slots__ = ("g",)

    def __init__(self, g: TextGen):
        super().__init__()
        self.g = g

    def __missing__(self, key):
        val = self.g.slot(key)
        self[key] = val
        return val


SUMMARY_PREFIX = SUMMARY_PREFIX_FALLBACK
SUMMARY_END = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"


# ---------------------------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------------------------


def _session_id(rng: random.Random, ts: float, source: str) -> str:
    if source == "api_server":
        return f"api-{rng.getrandbits(64):016x}"
    stamp = datetime.fromtimestamp(ts, tz=UTC).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{rng.getrandbits(24):06x}"


def plan(args, home: Path, vocab: Vocab):
    rng = random.Random(f"plan:{args.seed}")
    M = args.messages
    P = max(1, args.projects)
    C = args.conversations

    # ---- sizes: log-spaced from ~25% down to ~0.05% (before normalisation) ----
    if P == 1:
        ratios = [1.0]
    else:
        hi, lo = 0.25, 0.0005
        ratios = [hi * (lo / hi) ** (i / (P - 1)) for i in range(P)]
    sizes = _largest_remainder(ratios, M, floor=min(30, M // (2 * P)))

    # ---- kinds: anchors (closest ranks to 1k/10k/100k) are explicit; one Home; ~20% auto ----
    kinds = [None] * P
    anchors = []
    for target in (1_000, 10_000, 100_000):
        best = min(range(P), key=lambda i: (abs(math.log(max(sizes[i], 1) / target)), i))
        anchors.append(best)
        kinds[best] = "explicit"
    free = [i for i in range(P) if kinds[i] is None]
    if free:
        home_rank = min(free, key=lambda i: (abs(i - P // 4), i))
        kinds[home_rank] = "home"
        free.remove(home_rank)
    n_auto = min(len(free), max(1 if P >= 3 else 0, round(P * 0.2)))
    for i in rng.sample(free, n_auto):
        kinds[i] = "auto"
    kinds = [k or "explicit" for k in kinds]

    topics_all = sorted(TOPICS)
    en_codes = list(EN_CODENAMES)
    rng.shuffle(en_codes)
    zh_codes = [p + s for p in ZH_CODE_PREFIX for s in ZH_CODE_SUFFIX]
    rng.shuffle(zh_codes)
    projects: list[Project] = []
    used_slugs = set()
    for i in range(P):
        kind = kinds[i]
        topics = rng.sample(topics_all, 2)
        code = en_codes[i % len(en_codes)] + ("" if i < len(en_codes) else str(i // len(en_codes) + 1))
        zcode = zh_codes[i % len(zh_codes)]
        if kind == "home":
            name, slug = "Home", None
        else:
            name = zcode if kind == "explicit" and rng.random() < 0.3 else f"{code} {topics[0].capitalize()}"
            slug = f"{code.lower()}-{topics[0]}"
            while slug in used_slugs:
                slug += "-x"
            used_slugs.add(slug)
        pr = Project(key=f"x{i:02d}", kind=kind, name=name, slug=slug, topics=topics, codename=code,
                     zh_codename=zcode, size=sizes[i])
        pr.zh_ratio = rng.choice((0.05, 0.3, 0.5, 0.85)) if kind != "home" else 0.6
        n_ident = 20 + min(180, sizes[i] // 500)
        pr.idents = [vocab.ident.items[rng.randrange(vocab.ident.n)] for _ in range(n_ident)]
        a = rng.uniform(0.0, 0.7)
        b = min(1.0, a + rng.uniform(0.25, 1.0))
        pr.window = (a, b)
        team = TEAMS[i % len(TEAMS)]
        if kind == "explicit":
            primary = home / "work" / team / slug
            folders = [str(primary)]
            extra = rng.random()
            if extra < 0.3:
                folders.append(str(home / "work" / "notes" / slug))
            if extra < 0.1:
                folders.append(str(home / "work" / team / f"{slug}-docs"))
            pr.folders = folders
            if rng.random() < 0.6:
                pr.git_folders = [folders[0]]
        elif kind == "auto":
            root = home / "work" / "oss" / f"{code.lower()}-{topics[0]}"
            pr.folders = [str(root)]
            pr.git_folders = [str(root)]
            pr.repo_root = str(root)
        projects.append(pr)

    # ---- conversations ----
    C_eff = max(1, min(C, M // 40))
    convs: list[Conv] = []
    for pr in projects:
        n_c = max(1, round(C_eff * pr.size / M))
        n_c = max(1, min(n_c, pr.size // 12))
        weights = [rng.lognormvariate(0.0, 0.8) for _ in range(n_c)]
        lens = _largest_remainder(weights, pr.size, floor=min(6, pr.size // n_c))
        a, b = pr.window
        for L in lens:
            start = YEAR_START + YEAR_SECONDS * rng.uniform(a, b) * 0.97
            c = Conv(idx=-1, project=pr, start=start, rows=L)
            if pr.kind == "home":
                c.source = "api_server" if rng.random() < 0.65 else "telegram"
            elif pr.kind == "auto":
                c.source = "tui" if rng.random() < 0.65 else "cli"
            else:
                c.source = "cli" if rng.random() < 0.55 else "tui"
            c.lang = "zh" if rng.random() < pr.zh_ratio else "en"
            if pr.folders:
                folder = pr.folders[0] if rng.random() < 0.75 else rng.choice(pr.folders)
                c.cwd = folder if rng.random() < 0.6 else str(Path(folder) / rng.choice(SUBDIRS))
                if folder in pr.git_folders:
                    c.repo_root = folder
                    c.branch = "main" if rng.random() < 0.7 else rng.choice(
                        ("feat/", "fix/", "chore/")) + vocab.noun1w.items[rng.randrange(vocab.noun1w.n)]
            c.titled = rng.random() < 0.8  # the title text is made at generation (titles are unique)
            convs.append(c)
            pr.convs.append(c)

    convs.sort(key=lambda c: (c.start, c.project.key))
    for i, c in enumerate(convs):
        c.idx = i

    # ---- features ----
    def elig_sub(c):
        return c.project.kind != "home" and c.rows >= 40

    for c in convs:
        if elig_sub(c) and rng.random() < 0.02:
            c.subagent_rows = 2 * rng.randint(3, 10)
    _guarantee(convs, rng, lambda c: c.subagent_rows > 0, elig_sub,
               lambda c: setattr(c, "subagent_rows", 8))
    for c in convs:
        main = c.rows - c.subagent_rows
        k = 1
        if main > MAX_SESSION_ROWS:
            k = math.ceil(main / (MAX_SESSION_ROWS * 0.9))
        elif main >= 40 and rng.random() < 0.08:
            k = rng.choice((2, 2, 3)) if main >= 60 else 2
        c.seg_rows = _split(main, k, rng)
    _guarantee(convs, rng, lambda c: len(c.seg_rows) > 1, lambda c: c.rows - c.subagent_rows >= 40,
               lambda c: setattr(c, "seg_rows", _split(c.rows - c.subagent_rows, 2, rng)))
    for c in convs:
        tip = c.seg_rows[-1]
        x = rng.random()
        if tip >= 16 and x < 0.06:
            c.op = "compact"
        elif tip >= 10 and x < 0.11:
            c.op = "rewind"
        if rng.random() < 0.03:
            c.archived = True
    _guarantee(convs, rng, lambda c: c.op == "compact", lambda c: c.seg_rows[-1] >= 16 and c.op is None,
               lambda c: setattr(c, "op", "compact"))
    _guarantee(convs, rng, lambda c: c.op == "rewind", lambda c: c.seg_rows[-1] >= 10 and c.op is None,
               lambda c: setattr(c, "op", "rewind"))
    _guarantee(convs, rng, lambda c: c.archived, lambda c: True, lambda c: setattr(c, "archived", True))

    # ---- planted facts: 1 per project, +2 for the bucket projects, +1 for big projects ----
    facts = []
    fact_i = 0
    used = {id(vocab.plant_zh): 0, id(vocab.plant_camel): 0, "codes": 0}
    for rank, pr in enumerate(projects):
        want = 1 + (2 if rank in anchors else 0) + (1 if pr.size >= 20_000 else 0)
        cands = [c for c in pr.convs if not c.archived and c.op != "rewind" and c.seg_rows[0] >= 12]
        rng.shuffle(cands)
        for c in cands[:want]:
            lang = c.lang
            # every planted term is used once (pools are disjoint from what the text generator emits)
            pool = (vocab.plant_zh if lang == "zh" else vocab.plant_camel) if rng.random() < 0.6 else None
            if pool and used[id(pool)] < len(pool):
                term = pool[used[id(pool)]]
                used[id(pool)] += 1
            else:
                term = vocab.plant_codes[used["codes"]]
                used["codes"] += 1
            f = {"id": f"f{fact_i:03d}", "project_key": pr.key, "conv": c.idx, "lang": lang, "term": term,
                 "term_kind": ("zh_term" if term in vocab.plant_zh else
                               "error_code" if term.startswith("E") and term[1:].isdigit() else "identifier"),
                 # a turn is at most 8 rows, so turn <= rows/16 keeps the fact in the first half
                 "turn": rng.randint(0, max(0, c.seg_rows[0] // 16 - 1))}
            fact_i += 1
            if lang == "zh":
                n1 = TOPICS[pr.topics[0]]["zh"][rng.randrange(len(TOPICS[pr.topics[0]]["zh"]))]
                n2 = rng.choice(("方案", "迁移", "上线计划", "重构", "切换", "容量规划"))
                tech = vocab.tech.items[rng.randrange(12)]
                verb = vocab.zv.items[rng.randrange(vocab.zv.n)]
                f["user"] = f"{n1}的{n2}以后怎么处理比较好？我们得定个结论。"
                f["answer"] = (f"最后定下来：{n1}的{n2}统一{verb}到 {tech}，入口保留 {term}，"
                               f"{rng.choice(ZH_REASONS)}。旧的逻辑下个版本删除。")
                f["question"] = rng.choice((f"上次{n1}的{n2}怎么定的？", f"{n1}{n2}最后是怎么决定的",
                                            f"我们之前关于{n1}{n2}的结论是什么"))
                f["keywords"] = [n1, n2]
            else:
                n1 = TOPICS[pr.topics[0]]["en"][rng.randrange(len(TOPICS[pr.topics[0]]["en"]))]
                n2 = rng.choice(("migration", "rollout", "cleanup", "redesign", "cutover", "capacity plan"))
                tech = vocab.tech.items[rng.randrange(12)]
                verb = vocab.verb.items[rng.randrange(vocab.verb.n)][0]
                f["user"] = f"How should we handle the {n1} {n2} going forward? We need a decision."
                f["answer"] = (f"Decision: we {verb} the {n1} {n2} onto {tech} and keep {term} as the single "
                               f"entry point, {rng.choice(EN_REASONS)}. The old path is removed next release.")
                f["question"] = rng.choice((f"what did we decide about the {n1} {n2}?",
                                            f"how did we end up handling the {n1} {n2}",
                                            f"what was the decision on the {n1} {n2} and why"))
                f["keywords"] = [n1, n2]
            c.facts.append(f)
            facts.append(f)
    return projects, convs, facts, anchors, C_eff


def _split(total: int, k: int, rng: random.Random) -> list[int]:
    if k <= 1:
        return [total]
    w = [rng.uniform(0.6, 1.4) for _ in range(k)]
    return _largest_remainder(w, total, floor=min(20, total // k))


def _guarantee(convs, rng, has, eligible, apply):
    if any(has(c) for c in convs):
        return
    el = [c for c in convs if eligible(c)]
    if el:
        apply(el[rng.randrange(len(el))])


# ---------------------------------------------------------------------------------------------
# Generation of one conversation
# ---------------------------------------------------------------------------------------------


def _gap(rng: random.Random, role_from: str) -> float:
    if role_from == "user":
        return rng.uniform(3, 60)
    if role_from == "tool_call":
        return rng.uniform(0.5, 20)
    x = rng.random()
    if x < 0.75:
        return rng.uniform(20, 300)
    if x < 0.98:
        return rng.uniform(300, 3600)
    return rng.uniform(3600, 16 * 3600)  # the user came back later (resume)


def gen_rows(tg: TextGen, rng: random.Random, n: int, t: float, lang: str, facts=()):
    """Exactly n rows starting with a user row; returns (rows, last_ts)."""
    rows: list[dict[str, Any]] = []
    plant = {f["turn"]: f for f in facts}
    turn = 0
    while len(rows) < n:
        f = plant.get(turn)
        ml = lang if rng.random() > 0.1 else ("en" if lang == "zh" else "zh")
        rows.append({"role": "user", "content": f["user"] if f else tg.user_text(ml), "timestamp": t})
        t += _gap(rng, "user")
        rem = n - len(rows)
        if rem == 0:
            break
        if rem >= 3 and not f and rng.random() < 0.12:  # ~9% tool rows, ~9% tool-call rows
            for _ in range(min(rng.choice((1, 1, 2, 3)), (rem - 1) // 2)):
                intro, calls, tool, call_id, out = tg.tool_exchange(ml)
                rows.append({"role": "assistant", "content": intro, "tool_calls": calls,
                             "finish_reason": "tool_calls", "timestamp": t})
                t += _gap(rng, "tool_call")
                rows.append({"role": "tool", "content": out, "tool_call_id": call_id, "tool_name": tool,
                             "timestamp": t})
                t += _gap(rng, "tool_call")
        rows.append({"role": "assistant", "content": f["answer"] if f else tg.assistant_text(ml),
                     "finish_reason": "stop", "timestamp": t})
        if f:
            f["planted"] = True
        t += _gap(rng, "assistant")
        turn += 1
    return rows, t


def _copy(msg: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in msg.items()}


@dataclass
class SessOut:
    sid: str
    source: str
    start: float
    rows: list[dict[str, Any]]  # base rows written by import/append
    end_ts: float
    parent: str | None = None
    cwd: str | None = None
    cwd_via_update: bool = False  # tui: update_session_cwd(sid, cwd, branch, root)
    branch: str = ""
    repo_root: str = ""
    end_reason: str | None = None
    ended_at: float | None = None
    title: str | None = None
    model: str = ""
    model_config: dict[str, Any] | None = None
    op: str | None = None
    compact_msgs: list[dict[str, Any]] = field(default_factory=list)
    cont: list[dict[str, Any]] = field(default_factory=list)  # appended after op
    rewind_index: int = -1
    peer: dict[str, Any] | None = None
    subagent: bool = False


def gen_conversation(c: Conv, vocab: Vocab, seed: int, titles: set, sids: set) -> list[SessOut]:
    rng = random.Random(f"conv:{seed}:{c.idx}")
    pr = c.project
    tg = TextGen(vocab, pr, rng)
    model = MODELS[rng.randrange(len(MODELS))]
    out: list[SessOut] = []
    t = c.start
    lang = c.lang
    base_title = None
    if c.titled:
        base_title = tg.fill(rng.choice(("{V} {n} in {code}", "{code}: {n} {adj} fix", "{V} the {n} {n2}",
                                          "{zn}{zv}", "{zcode} {zn}{zp}", "Debug {err}", "{V} {id}")))
        base_title = base_title[:70]
        title = base_title
        k = 2
        while title in titles:
            title = f"{base_title} ({k})"
            k += 1
        titles.add(title)
        base_title = title
    peer = None
    if c.source == "telegram":
        chat = -1000000000000 - rng.randrange(10 ** 6) if rng.random() < 0.5 else rng.randrange(10 ** 8, 10 ** 9)
        ctype = "group" if chat < 0 else "dm"
        uid = str(rng.randrange(10 ** 8, 10 ** 9))
        peer = {"source": "telegram", "user_id": uid, "chat_id": str(chat), "chat_type": ctype,
                "session_key": f"agent:main:telegram:{ctype}:{chat}" + (f":{uid}" if ctype == "group" else "")}
    nseg = len(c.seg_rows)
    prev: SessOut | None = None
    for si, R in enumerate(c.seg_rows):
        is_tip = si == nseg - 1
        sid = _session_id(rng, t, c.source)
        while sid in sids:
            sid = _session_id(rng, t, c.source)
        sids.add(sid)
        op = c.op if is_tip else None
        header: list[dict[str, Any]] = []
        if prev is not None:
            # Legacy rotation: the continuation starts with the compressed context (summary + tail).
            header = [{"role": "user", "content": tg.summary_text(lang), "timestamp": t}]
            for m in prev.rows[-2:]:
                h = _copy(m)
                h["timestamp"] = t + 0.001 * (len(header))
                header.append(h)
            t += 1.0
        extra = 5 if op == "compact" else 2 if op == "rewind" else 0
        n_new = R - len(header) - extra
        facts = c.facts if si == 0 else ()
        body, t = gen_rows(tg, rng, n_new, t, lang, facts)
        rows = header + body
        s = SessOut(sid=sid, source=c.source, start=rows[0]["timestamp"], rows=rows, end_ts=t, model=model,
                    parent=prev.sid if prev else None, op=op)
        if si == 0:
            s.title = base_title
            s.peer = peer
            if c.cwd:
                s.cwd = c.cwd
                s.cwd_via_update = c.source == "tui"
                s.branch = c.branch
                s.repo_root = c.repo_root
        elif base_title:
            s.title = f"{base_title} #{si + 1}"
        if op == "compact":
            last_ts = rows[-1]["timestamp"]
            tail = [_copy(m) for m in rows[-2:]]
            role = "assistant" if tail[0]["role"] == "user" else "user"
            s.compact_msgs = [{"role": role, "content": tg.summary_text(lang), "timestamp": last_ts + 1.0}] + tail
            t = last_ts + 60
            s.cont = [{"role": "user", "content": tg.user_text(lang), "timestamp": t},
                      {"role": "assistant", "content": tg.assistant_text(lang), "timestamp": t + 20}]
            t += 30
        elif op == "rewind":
            # /rewind to one of the last three user turns of this session (rows from there on go inactive)
            users = [i for i, m in enumerate(rows) if m["role"] == "user" and i >= len(header)]
            s.rewind_index = users[-min(len(users), rng.randint(1, 3))]
            t = rows[-1]["timestamp"] + 30
            s.cont = [{"role": "user", "content": tg.user_text(lang), "timestamp": t},
                      {"role": "assistant", "content": tg.assistant_text(lang), "timestamp": t + 20}]
            t += 30
        last = (s.cont or rows)[-1]["timestamp"]
        if not is_tip:
            s.end_reason = "compression"
            s.ended_at = last + 0.5
            t = last + rng.uniform(1, 10)
        else:
            reason = {"cli": "cli_close", "tui": rng.choice(("agent_close", "session_switch", "new_session")),
                      "telegram": "session_reset", "api_server": None}[c.source]
            if reason and rng.random() < 0.9:
                s.end_reason = reason
                s.ended_at = last + rng.uniform(5, 600)
        out.append(s)
        prev = s
    if c.subagent_rows:
        parent = out[0]
        ts = parent.rows[min(len(parent.rows) - 1, 2)]["timestamp"] + 1
        sid = _session_id(rng, ts, "subagent")
        while sid in sids:
            sid = _session_id(rng, ts, "subagent")
        sids.add(sid)
        sub, _ = gen_rows(tg, rng, c.subagent_rows, ts, lang)
        sub[0]["content"] = tg.fill("Subtask: {v} the {n} in {path} and report back. Focus on {id}.")
        out.insert(1, SessOut(sid=sid, source="subagent", start=ts, rows=sub, end_ts=sub[-1]["timestamp"],
                              parent=parent.sid, model=model, model_config={"_delegate_from": parent.sid},
                              end_reason="agent_close", ended_at=sub[-1]["timestamp"] + 1, subagent=True))
    return out


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


def _import_dict(s: SessOut) -> dict[str, Any]:
    d = {"id": s.sid, "source": s.source, "model": s.model, "started_at": s.start,
         "ended_at": s.ended_at, "end_reason": s.end_reason, "title": s.title,
         "parent_session_id": s.parent, "messages": s.rows}
    if s.model_config:
        d["model_config"] = s.model_config
    if s.cwd and not s.cwd_via_update:
        d["cwd"] = s.cwd  # CLI records cwd only (no git metadata)
    return d


def _append_session(db, s: SessOut):
    kw = {"model": s.model}
    if s.model_config:
        kw["model_config"] = s.model_config
    if s.parent:
        kw["parent_session_id"] = s.parent
    if s.cwd and not s.cwd_via_update:
        kw["cwd"] = s.cwd
    db.create_session(s.sid, s.source, **kw)
    for m in s.rows:
        db.append_message(s.sid, m["role"], m.get("content"), tool_name=m.get("tool_name"),
                          tool_calls=m.get("tool_calls"), tool_call_id=m.get("tool_call_id"),
                          finish_reason=m.get("finish_reason"), timestamp=m["timestamp"])
    if s.title:
        db.set_session_title(s.sid, s.title)


def _post_ops(db, s: SessOut, mode: str) -> dict[str, int]:
    res = {"rewound": 0, "writes": 0}
    if s.cwd and s.cwd_via_update:
        db.update_session_cwd(s.sid, s.cwd, s.branch, s.repo_root)
        res["writes"] += 1
    if s.peer:
        db.record_gateway_session_peer(s.sid, **s.peer)
        res["writes"] += 1
    if s.op == "compact":
        db.archive_and_compact(s.sid, s.compact_msgs)
        res["writes"] += 1
    elif s.op == "rewind":
        ids = [m["id"] for m in db.get_messages(s.sid)]
        r = db.rewind_to_message(s.sid, ids[s.rewind_index])
        res["rewound"] = r["rewound_count"]
        expect = len(s.rows) - s.rewind_index
        if r["rewound_count"] != expect:
            raise RuntimeError(f"rewind of {s.sid}: expected {expect} rows, got {r['rewound_count']}")
        res["writes"] += 1
    for m in s.cont:
        db.append_message(s.sid, m["role"], m["content"], timestamp=m["timestamp"])
        res["writes"] += 1
    if mode == "append" and s.end_reason:
        db.end_session(s.sid, s.end_reason)
        res["writes"] += 1
    return res


class Progress:
    def __init__(self, total: int, quiet: bool):
        self.total = total
        self.quiet = quiet
        self.t0 = time.time()
        self.last = 0.0
        self.done = 0

    def update(self, done: int, force: bool = False, extra: str = ""):
        self.done = done
        now = time.time()
        if self.quiet or (not force and now - self.last < 2.0):
            return
        self.last = now
        el = now - self.t0
        rate = done / el if el > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else 0.0
        pct = 100.0 * done / self.total if self.total else 100.0
        sys.stderr.write(f"[synth] {done:,}/{self.total:,} rows ({pct:5.1f}%)  {rate:,.0f} rows/s  "
                         f"elapsed {_fmt_dur(el)}  ETA {_fmt_dur(eta)} {extra}\n")
        sys.stderr.flush()


def _git_init(path: str):
    subprocess.run(["git", "init", "-q", "-b", "main", path], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _clean(home: Path):
    for name in ("state.db", "state.db-wal", "state.db-shm", "projects.db", "projects.db-wal",
                 "projects.db-shm", "synth_manifest.json", "synth_queries.json"):
        p = home / name
        if p.exists():
            p.unlink()
    if (home / "work").exists():
        shutil.rmtree(home / "work")


def run(args) -> dict[str, Any]:
    t_start = time.time()
    home = Path(args.home).expanduser().resolve()
    home.mkdir(parents=True, exist_ok=True)
    if (home / "state.db").exists() or (home / "projects.db").exists():
        if not args.force:
            raise SystemExit(f"{home} already has state.db/projects.db; pass --force to regenerate")
        _clean(home)
    os.environ["HERMES_HOME"] = str(home)
    global SUMMARY_PREFIX, SUMMARY_END
    try:  # the real strings Hermes writes
        from agent import context_compressor as _cc

        SUMMARY_PREFIX = _cc.SUMMARY_PREFIX
        SUMMARY_END = getattr(_cc, "_SUMMARY_END_MARKER", SUMMARY_END)
    except Exception:  # pragma: no cover - older Hermes
        pass
    from hermes_cli import projects_db
    from hermes_state import SessionDB

    vocab = Vocab(args.seed)
    projects, convs, facts, anchors, C_eff = plan(args, home, vocab)
    if C_eff != args.conversations and not args.quiet:
        sys.stderr.write(f"[synth] --conversations {args.conversations} clamped to {C_eff} "
                         f"(at least 40 messages per conversation)\n")

    # ---- folders, git repos, projects.db ----
    for pr in projects:
        for f in pr.folders:
            for sub in SUBDIRS:
                Path(f, sub).mkdir(parents=True, exist_ok=True)
        for g in pr.git_folders:
            _git_init(g)
    with projects_db.connect_closing(home / "projects.db") as pconn:
        for pr in projects:
            if pr.kind == "explicit":
                pr.pid = projects_db.create_project(pconn, name=pr.name, slug=pr.slug, folders=pr.folders,
                                                    description=f"{' / '.join(pr.topics)} work")
            elif pr.kind == "auto":
                pr.pid = f"auto:{pr.slug}"
            else:
                pr.pid = "home"
    for pr in projects:
        pr.stats = {"messages": 0, "active": 0, "compacted": 0, "rewound": 0, "summary_rows": 0,
                    "tool_rows": 0, "sessions": 0, "session_ids": [], "conversations": len(pr.convs),
                    "lineages": 0, "archived_sessions": 0, "subagent_sessions": 0, "subagent_messages": 0,
                    "sources": {}, "first_ts": None, "last_ts": None}

    db = SessionDB(db_path=home / "state.db")
    prog = Progress(args.messages, args.quiet)
    written = 0
    titles: set = set()
    sids: set = set()
    fact_sid: dict[str, str] = {}
    batch: list[SessOut] = []
    batch_convs: list[tuple] = []
    batch_rows = 0
    batch_bytes = 0
    t_write0 = time.time()
    post_writes = 0

    def post(c: Conv, s: SessOut):
        nonlocal written, post_writes
        r = _post_ops(db, s, args.write_mode)
        post_writes += r["writes"]
        written += len(s.cont) + (len(s.compact_msgs) if s.op == "compact" else 0)
        _account(c, s, r)

    def flush():
        nonlocal batch, batch_convs, batch_rows, batch_bytes, written, post_writes
        if not batch:
            return
        if args.write_mode == "import":
            res = db.import_sessions([_import_dict(s) for s in batch])
            if not res.get("ok") or res.get("imported") != len(batch):
                raise RuntimeError(f"import_sessions failed: {json.dumps(res.get('errors'))[:2000]}")
            written += sum(len(s.rows) for s in batch)
        for c, sess in batch_convs:
            for s in sess:
                if args.write_mode == "append":
                    # live order: create + append, then compaction/rewind/end, then the continuation
                    _append_session(db, s)
                    written += len(s.rows)
                post(c, s)
                prog.update(written)
            if c.archived:
                db.set_session_archived(sess[-1].sid, True)
                post_writes += 1
        prog.update(written)
        batch, batch_convs, batch_rows, batch_bytes = [], [], 0, 0

    def _account(c: Conv, s: SessOut, r: dict[str, int]):
        st = c.project.stats
        n_rows = len(s.rows) + len(s.cont) + (len(s.compact_msgs) if s.op == "compact" else 0)
        if s.subagent:
            st["subagent_sessions"] += 1
            st["subagent_messages"] += n_rows
            return
        st["messages"] += n_rows
        st["sessions"] += 1
        st["session_ids"].append(s.sid)
        st["sources"][s.source] = st["sources"].get(s.source, 0) + 1
        st["tool_rows"] += sum(1 for m in s.rows if m["role"] == "tool")
        comp = len(s.rows) if s.op == "compact" else 0
        st["compacted"] += comp
        st["rewound"] += r["rewound"]
        st["active"] += n_rows - comp - r["rewound"]
        st["summary_rows"] += (1 if s.parent else 0) + (1 if s.op == "compact" else 0)
        if c.archived:
            st["archived_sessions"] += 1
        first = s.rows[0]["timestamp"]
        last = (s.cont or s.rows)[-1]["timestamp"]
        st["first_ts"] = first if st["first_ts"] is None else min(st["first_ts"], first)
        st["last_ts"] = last if st["last_ts"] is None else max(st["last_ts"], last)

    for c in convs:
        sess = gen_conversation(c, vocab, args.seed, titles, sids)
        for f in c.facts:
            if not f.get("planted"):
                raise RuntimeError(f"fact {f['id']} was not planted (conv {c.idx})")
            fact_sid[f["id"]] = sess[0].sid
        n = sum(len(s.rows) for s in sess)
        nbytes = sum(len(m["content"] or "") * 3 + 200 for s in sess for m in s.rows)
        if batch and (batch_rows + n > args.batch_messages or len(batch) + len(sess) > 450
                      or batch_bytes + nbytes > 20_000_000):
            flush()
        batch.extend(sess)
        batch_convs.append((c, sess))
        batch_rows += n
        batch_bytes += nbytes
    flush()
    # lineages = conversations made of more than one session
    for pr in projects:
        pr.stats["lineages"] = sum(1 for c in pr.convs if len(c.seg_rows) > 1)
    t_write = time.time() - t_write0
    prog.update(written, force=True, extra="(writes done)")

    t_opt0 = time.time()
    if not args.no_optimize:
        db.optimize_fts()
    t_opt = time.time() - t_opt0
    total_db_rows = db.message_count()
    db.close()
    if total_db_rows != args.messages:
        raise RuntimeError(f"state.db has {total_db_rows} messages, expected {args.messages}")

    manifest = build_manifest(args, home, projects, convs, facts, fact_sid, anchors, C_eff)
    manifest["timings"] = {"total_s": round(time.time() - t_start, 2), "write_s": round(t_write, 2),
                           "optimize_s": round(t_opt, 2), "write_mode": args.write_mode,
                           "post_op_writes": post_writes}
    sdb = home / "state.db"
    wal = home / "state.db-wal"
    manifest["sizes"] = {"state_db_bytes": sdb.stat().st_size,
                         "state_db_wal_bytes": wal.stat().st_size if wal.exists() else 0,
                         "projects_db_bytes": (home / "projects.db").stat().st_size}
    (home / "synth_manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1))
    queries = build_queries(args, vocab, projects, facts, fact_sid, manifest)
    (home / "synth_queries.json").write_text(json.dumps(queries, ensure_ascii=False, indent=1))
    return manifest


def build_manifest(args, home, projects, convs, facts, fact_sid, anchors, C_eff):
    plist = []
    for pr in projects:
        st = pr.stats
        plist.append({
            "id": pr.pid, "key": pr.key, "kind": pr.kind, "name": pr.name, "slug": pr.slug,
            "folder": pr.folders[0] if pr.folders else None, "folders": pr.folders,
            "git_folders": pr.git_folders, "repo_root": pr.repo_root, "topics": pr.topics,
            "zh_ratio": pr.zh_ratio, "codename": pr.codename, "zh_codename": pr.zh_codename,
            "target_messages": pr.size, **st,
            "session_count": st["sessions"],
        })
    scoped = [p for p in plist if p["kind"] != "home"]
    buckets = {}
    for name, target in (("1k", 1_000), ("10k", 10_000), ("100k", 100_000)):
        best = min(scoped, key=lambda p: (abs(math.log(max(p["messages"], 1) / target)), p["key"]))
        buckets[name] = best["id"]
    for f in facts:
        f["session_id"] = fact_sid[f["id"]]
        f["project"] = next(p.pid for p in projects if p.key == f["project_key"])
        c = convs[f["conv"]]
        f["state"] = "compacted" if (c.op == "compact" and len(c.seg_rows) == 1) else "active"
    return {
        "version": 1,
        "generator": "python -m benchmarks synth",
        "params": {"messages": args.messages, "conversations": args.conversations,
                   "conversations_effective": C_eff, "projects": args.projects, "seed": args.seed,
                   "write_mode": args.write_mode},
        "home": str(home),
        "time_range": [YEAR_START, YEAR_START + YEAR_SECONDS],
        "totals": {
            "messages": sum(p["messages"] + p["subagent_messages"] for p in plist),
            "attributed_messages": sum(p["messages"] for p in plist),
            "subagent_messages": sum(p["subagent_messages"] for p in plist),
            "sessions": sum(p["sessions"] + p["subagent_sessions"] for p in plist),
            "conversations": len(convs),
            "lineages": sum(p["lineages"] for p in plist),
            "compacted": sum(p["compacted"] for p in plist),
            "rewound": sum(p["rewound"] for p in plist),
            "archived_sessions": sum(p["archived_sessions"] for p in plist),
            "summary_rows": sum(p["summary_rows"] for p in plist),
        },
        "buckets": buckets,
        "bucket_sizes": {k: next(p["messages"] for p in plist if p["id"] == v) for k, v in buckets.items()},
        "projects": plist,
        "planted": [{k: f[k] for k in ("id", "project", "session_id", "lang", "term", "term_kind", "state",
                                       "question", "keywords", "answer")} for f in facts],
    }


def build_queries(args, vocab: Vocab, projects, facts, fact_sid, manifest):
    rng = random.Random(f"queries:{args.seed}")
    b = manifest["buckets"]
    bucket_ids = list(dict.fromkeys([b["1k"], b["10k"], b["100k"]]))
    big = b["100k"]
    qs = []

    def add(text, lang, kind, projs, expect=None):
        q = {"id": f"q{len(qs) + 1:03d}", "text": text, "lang": lang, "kind": kind, "projects": projs}
        if expect is not None:
            q["expect"] = expect
        qs.append(q)

    for f in facts:
        projs = list(dict.fromkeys([f["project"], big]))
        exp = {p: ([f["session_id"]] if p == f["project"] else []) for p in projs}
        add(f["term"], "zh" if f["term_kind"] == "zh_term" else "en", "rare", projs, exp)
    for f in facts:
        projs = list(dict.fromkeys([f["project"], big]))
        exp = {p: ([f["session_id"]] if p == f["project"] else []) for p in projs}
        add(f["question"], f["lang"], "question", projs, exp)
    # common single words (top of the Zipf ranks)
    for w in vocab.en_nouns[:12]:
        add(w, "en", "common", bucket_ids + ["home"])
    for w in vocab.zh_nouns[:12]:
        add(w, "zh", "common", bucket_ids + ["home"])
    for i in range(3):
        add(next(p.codename for p in projects if p.pid == big) if i == 0 else vocab.tech.items[i],
            "en", "common", bucket_ids)
    # mixed zh + identifiers
    for _ in range(20):
        tpl = rng.choice(("修复 {id} 的 {err}", "{cls} {zn}{zp}", "{tech} {zn}怎么配置", "{err} {zn}"))
        pick = rng.choice(bucket_ids)
        pr = next(p for p in projects if p.pid == pick)
        tg = TextGen(vocab, pr, rng)
        add(tg.fill(tpl), "mixed", "mixed", bucket_ids)
    # rare general terms from the long tail (may or may not occur)
    for _ in range(10):
        add(vocab.camel.items[rng.randrange(vocab.camel.n // 2, vocab.camel.n)], "en", "rare_tail", bucket_ids)
    # 2-3 keyword combos (topic words + mid-frequency words)
    target = max(200, len(qs) + 30)
    while len(qs) < target:
        pick = rng.choice(bucket_ids)
        pr = next(p for p in projects if p.pid == pick)
        tg = TextGen(vocab, pr, rng)
        if rng.random() < 0.5:
            tpl = rng.choice(("{n} {v}", "{n} {adj} {n2}", "{tech} {n}", "{n} {err}", "{v} {n} {tech}", "{jar} {n}"))
            lang = "en"
        else:
            tpl = rng.choice(("{zn} {zp}", "{zn} {zv}", "{zc}", "{zn} {zn2} {zv}", "{tech} {zn}"))
            lang = "zh"
        add(tg.fill(tpl), lang, "keywords", bucket_ids)
    return {"version": 1, "seed": args.seed, "buckets": manifest["buckets"], "queries": qs}


def print_report(m: dict[str, Any]):
    rows = sorted(m["projects"], key=lambda p: -p["messages"])
    inv = {v: k for k, v in m["buckets"].items()}
    print(f"{'project':<24} {'kind':<8} {'messages':>9} {'sessions':>8} {'lin':>4} {'cmp':>6} {'rew':>5} "
          f"{'arch':>4} {'sub':>5}  bucket")
    for p in rows:
        print(f"{(p['slug'] or p['id'])[:24]:<24} {p['kind']:<8} {p['messages']:>9,} {p['sessions']:>8} "
              f"{p['lineages']:>4} {p['compacted']:>6} {p['rewound']:>5} {p['archived_sessions']:>4} "
              f"{p['subagent_messages']:>5}  {inv.get(p['id'], '')}")
    t = m["totals"]
    print(f"total messages {t['messages']:,} (attributed {t['attributed_messages']:,}, subagent "
          f"{t['subagent_messages']:,}); sessions {t['sessions']:,}; conversations {t['conversations']:,}; "
          f"lineages {t['lineages']}; compacted rows {t['compacted']:,}; rewound rows {t['rewound']:,}; "
          f"archived sessions {t['archived_sessions']}")
    print("buckets: " + ", ".join(f"{k}={v} ({m['bucket_sizes'][k]:,} msgs)" for k, v in m["buckets"].items()))
    tm = m["timings"]
    print(f"time {tm['total_s']}s (writes {tm['write_s']}s, fts optimize {tm['optimize_s']}s); "
          f"state.db {m['sizes']['state_db_bytes'] / 1e6:,.1f} MB"
          + (f" (+ WAL {m['sizes']['state_db_wal_bytes'] / 1e6:,.1f} MB)" if m["sizes"]["state_db_wal_bytes"] else ""))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True, help="HERMES_HOME to create (state.db, projects.db, work/)")
    ap.add_argument("--messages", type=int, default=20_000, help="exact number of message rows (default 20000)")
    ap.add_argument("--conversations", type=int, default=None,
                    help="approximate conversations (default messages/200; clamped to messages/40)")
    ap.add_argument("--projects", type=int, default=50, help="scopes incl. one Home and ~20%% auto repos")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write-mode", choices=("import", "append"), default="import",
                    help="import = SessionDB.import_sessions batches (fast); append = one append_message per row")
    ap.add_argument("--batch-messages", type=int, default=40_000, help="rows per import_sessions call (<=50000)")
    ap.add_argument("--no-optimize", action="store_true", help="skip the final SessionDB.optimize_fts()")
    ap.add_argument("--force", action="store_true", help="delete an existing synthetic home's dbs and work/ first")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr, no report on stdout")
    args = ap.parse_args(argv)
    if args.messages < 200:
        ap.error("--messages must be >= 200")
    if args.conversations is None:
        args.conversations = max(1, args.messages // 200)
    args.batch_messages = max(1000, min(args.batch_messages, 49_000))
    m = run(args)
    if not args.quiet:
        print_report(m)


if __name__ == "__main__":
    main()
