"""The synthetic world's vocabulary and text templates: topics, words, identifiers, replies."""

from __future__ import annotations

YEAR_START = 1735689600.0  # 2025-01-01T00:00:00Z
YEAR_SECONDS = 365 * 86400.0
MAX_SESSION_ROWS = 5000  # import_sessions caps a session at 10k rows / 5 MB; stay well below
SUMMARY_PREFIX_FALLBACK = "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below."

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

