"""An operator's bad day, rerunnable: load with isolation checks, kill -9 at each write, a full disk, damaged files.

Issue 39's campaign as a benchmark, bounded in time and on loopback only:

1. **Load**: a world of chat groups bound to projects (``worlds/groups.py``; random vectors from
   ``fill_vectors`` so hybrid runs at full cost without hours of embedding), a real
   ``hermes recall serve``, N clients for T seconds (half keyword, half hybrid), every result
   checked to lie in its chat's project.
2. **kill -9** of the server in a ``/move``, in a ``/forget``, under load, and of ``hermes recall
   index`` half-way: is everything consistent after the restart, and what did recovery take.
3. **Full disk**: the profile on a tmpfs a few MB bigger than itself, filled while the server runs
   (needs root to mount; said and skipped otherwise): every endpoint's answer, the CLI's, whether
   anything was half-written, whether writes work once space is freed.
4. **Damaged files**: forgotten.db deleted, emptied, an older copy, garbage; bindings.db deleted,
   garbage; embeddings.db garbage mid-file — on a small world indexed by the real model: how many
   forgotten turns come back in 24 searches, what status says, the recovery it names, run.

    python -m benchmarks faults                                   # ~7 min here
    python -m benchmarks faults --messages 50000 --seconds 60     # the issue's size
    python -m benchmarks faults --json benchmarks/out/faults.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import httpx

from benchmarks import faults_steps as steps


def build(root: Path, name: str, messages: int, real_index: bool) -> tuple[Path, dict[str, Any]]:
    """A groups world; member 10000 of the first group forgot their turns (through the API, as the
    bot does). ``real_index``: the local model indexes it (small worlds), else random vectors."""
    from benchmarks.worlds import groups

    home = root / name
    os.environ["HERMES_HOME"] = str(home)
    manifest = groups.build(home, root / f"{name}-work", messages=messages)
    if real_index:
        from hermes_side.embedding import build_index, load_settings

        build_index(home, load_settings(home))
    else:
        from benchmarks import fill_vectors

        fill_vectors.main(["--home", str(home), "--all", "--sample", "64"])
    chat = sorted(manifest["chats"])[0]
    api = steps.Api(home, root / f"{name}-build.log")
    try:
        status, body = api.call("POST", "/forget", {"chat": chat, "scope": "member", "user": "10000", "apply": True})
        assert status == 200, body
        shutil.copy2(steps.plugin(home) / "forgotten.db", root / "forgotten-older.db")  # before the second
        status, body = api.call("POST", "/forget", {"chat": chat, "scope": "member", "user": "10001", "apply": True})
        assert status == 200, body
    finally:
        api.stop()
    manifest["forgot"] = {"chat": chat, "ids": sorted(steps.forgotten_ids(home))}
    return home, manifest


def load(home: Path, manifest: dict, root: Path, clients: int, seconds: float, seed: int) -> dict[str, Any]:
    api = steps.Api(home, root / "load.log")
    allowed = {chat: set(manifest["projects"][info["project"]]) for chat, info in manifest["chats"].items()}
    words = manifest["words"]["en"] + manifest["words"]["zh"]
    samples: dict[str, list[float]] = {"keyword": [], "hybrid": []}
    errors: dict[str, int] = {}
    checked, outside = [0], [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(n: int) -> None:
        rng, mode = random.Random(seed + n), ("keyword", "hybrid")[n % 2]
        with httpx.Client(base_url=api.server.url, headers=steps.AUTH, timeout=120) as c:
            while time.monotonic() < deadline:
                chat = rng.choice(sorted(allowed))
                t0 = time.perf_counter()
                try:
                    r = c.post("/search", json={"query": " ".join(rng.sample(words, 2)), "chat": chat, "mode": mode,
                                                "limit": 5})
                    code, body = r.status_code, r.json()
                except (httpx.HTTPError, ValueError) as exc:
                    code, body = type(exc).__name__, {}
                took = (time.perf_counter() - t0) * 1000
                sessions = {row["session_id"] for row in body.get("results") or []}
                with lock:
                    if code == 200:
                        samples[mode].append(took)
                        checked[0] += len(sessions)
                        outside[0] += len(sessions - allowed[chat])
                    else:
                        errors[str(code)] = errors.get(str(code), 0) + 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    api.stop()
    return {"clients": clients, "seconds": round(wall, 1), "load_avg": os.getloadavg(),
            "modes": {m: _summary(v, wall) for m, v in samples.items()}, "errors": errors,
            "results_checked": checked[0], "outside_project": outside[0]}


def _summary(values: list[float], wall: float) -> dict[str, float]:
    if not values:
        return {"requests": 0}
    values = sorted(values)
    return {"requests": len(values), "per_s": round(len(values) / wall, 1), "p50": round(statistics.median(values)),
            "p95": round(values[int(len(values) * 0.95) - 1])}


def kills(worlds: dict[str, tuple[Path, dict]], root: Path, rounds: int, seed: int) -> dict[str, Any]:
    """Each write step killed ``rounds`` times, on a fresh copy of its world each time."""
    rng = random.Random(seed)
    out = {}
    for name, (step, world) in steps.KILLS.items():
        base, manifest = worlds[world]
        results = []
        for _ in range(rounds):
            home = steps.copy_home(base, root / "killed")
            results.append(step(home, manifest, root / "kill.log", rng))
        out[name] = {"rounds": rounds, "consistent": sum(r["consistent"] for r in results),
                     "recovery": sorted({r["recovery"] for r in results})}
    return out


def section(phase: str, result: dict[str, Any]) -> str:
    """One phase's table (or why it has none)."""
    lines: list[str] = []
    if isinstance(result.get(phase), dict) and "error" in result[phase]:
        return f"== {phase}: did not finish ({result[phase]['error']})"
    if phase == "load":
        ld = result["load"]
        lines += [f"== load: {ld['clients']} clients, {ld['seconds']} s, {result['world']['messages']:,} messages, "
                  f"{result['world']['groups']} groups, {result['world']['projects']} projects; load avg "
                  f"{' '.join(f'{x:.1f}' for x in ld['load_avg'])}",
                  f"{'mode':<8} {'requests':>8} {'req/s':>6} {'p50 ms':>7} {'p95 ms':>7}"]
        for mode, s in ld["modes"].items():
            lines.append(f"{mode:<8} {s.get('requests', 0):>8} {s.get('per_s', 0):>6} {s.get('p50', '-'):>7} "
                         f"{s.get('p95', '-'):>7}")
        lines.append(f"errors: {ld['errors'] or 'none'}; isolation: {ld['results_checked']:,} results checked, "
                     f"{ld['outside_project']} outside their chat's project")
    if phase == "kills":
        lines += ["== kill -9", f"{'step':<20} {'consistent':>10}  recovery"]
        for step, k in result["kills"].items():
            lines.append(f"{step:<20} {k['consistent']:>5}/{k['rounds']:<4}  {'; '.join(k['recovery'])}")
    if phase == "disk":
        d = result["disk"]
        lines += ["== full disk" + (f" (tmpfs {d['size_mb']} MB)" if "size_mb" in d else "")]
        if "skipped" in d:
            lines.append(f"skipped: {d['skipped']}")
        else:
            lines += [f"{name:<15} {code:>4}  {why[:110]}" for name, (code, why) in d["answers"].items()]
            c = d["cli_index"]
            lines.append(f"hermes recall index: exit {c['exit']}, traceback {c['traceback']}: {c['last'][:110]}")
            lines.append(f"half-written: {d['half_written']}; a write after freeing space: {d['writes_after_freeing']}")
    if phase == "damage":
        lines += ["== damaged and missing files (24 hybrid searches of the chat whose members forgot turns; "
                  "semantic: the searches after /status vs /status)",
                  f"{'fault':<30} {'answers':<12} {'leaked':>6} {'semantic':<22} {'status names':<12} "
                  "recovery run → ok"]
        for r in result["damage"]:
            answers = ",".join(f"{k}×{v}" for k, v in sorted(r["answers"].items()))
            sem = f"{'/'.join(sorted(r['semantic'])) or '-'} vs {r['status_semantic']}"
            lines.append(f"{r['fault']:<30} {answers:<12} {r['leaked']:>6} {sem:<22} {str(r['status_names_file']):<12} "
                         f"{r['recovery'][:60]} → {r['recovered']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=20000, help="the load world's size (the issue: 50000)")
    ap.add_argument("--small", type=int, default=800, help="the damage world's size (indexed by the real model)")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=2, help="kill -9 rounds per write step")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--phases", nargs="+", default=["load", "kills", "disk", "damage"],
                    choices=["load", "kills", "disk", "damage"])
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench-faults-"))
    started = time.monotonic()
    result: dict[str, Any] = {}
    worlds: dict[str, tuple[Path, dict]] = {}
    try:
        if {"kills", "disk", "damage"} & set(args.phases):  # indexed by the real model: the indexer, recoveries
            worlds["small"] = build(root / "small", "home", args.small, real_index=True)
        if {"load", "kills"} & set(args.phases):
            worlds["big"] = build(root / "big", "home", args.messages, real_index=False)
            manifest = worlds["big"][1]
            result["world"] = {"messages": manifest["messages"], "groups": len(manifest["chats"]),
                               "projects": len(manifest["projects"])}
        runs = {"load": lambda: load(*worlds["big"], root, args.clients, args.seconds, args.seed),
                "kills": lambda: kills(worlds, root, args.rounds, args.seed),
                "disk": lambda: steps.full_disk(*worlds["small"], root / "small"),
                "damage": lambda: steps.damaged(*worlds["small"], root / "small", 24)}
        for phase in args.phases:
            try:
                result[phase] = runs[phase]()
            except Exception as exc:  # one phase's failure keeps the others' figures
                traceback.print_exc()
                result[phase] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            print(section(phase, result) + "\n", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result["minutes"] = round((time.monotonic() - started) / 60, 1)
    print(f"({result['minutes']} min)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1, default=sorted))


if __name__ == "__main__":
    main()
