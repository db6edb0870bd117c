"""``python -m app.bench search [--messages N] [--rounds R]``: search all chats, FTS5 trigram vs a LIKE scan.

Builds a history file of N messages (default 20,000; English and Chinese sentences, ~300 characters each) in a
temporary folder, then times ``Store.search`` (the trigram index) against the obvious baseline, ``content LIKE
'%q%'`` newest first with the same limit, for a rare English word, a rare Chinese phrase and a common word.
Also reports the one-time index build on an existing file (the migration). Prints one JSON line: median ms per
query for both and ``speedup`` = baseline ÷ ours (> 1: ours is faster).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from app.bench._util import emit
from app.core.conversation import Conversation, Message, Role
from app.core.history.search import ensure_search_index
from app.core.history.store import Store

WORDS = ["model", "token", "stream", "render", "window", "reply", "latency", "prompt", "context", "cache", "layer",
         "thread", "queue", "stop", "paint", "quantization", "template", "sampling", "history", "search", "export",
         "import", "library", "preset", "attachment"]
ZH = ["今天", "天气", "模型", "长城", "历史", "递归", "函数", "北京", "学习", "程序", "数据", "回答", "问题", "搜索"]


def build(path: Path, n: int) -> None:
    rng = random.Random(7)
    store = Store(path)
    store.db.execute("BEGIN")
    for c in range(max(1, n // 20)):
        conv = Conversation(title=f"chat {c}")
        for i in range(20):
            if rng.random() < 0.3:
                text = "".join(rng.choice(ZH) for _ in range(60)) + "。"
            else:
                text = " ".join(rng.choice(WORDS) for _ in range(45)) + "."
            if c == n // 40 and i == 5:
                text += " the zygomorphic flower 实时天气预报 here"
            store.save_message(conv, conv.add(Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, text)))
    store.db.execute("COMMIT")
    store.close()


def like(db: sqlite3.Connection, q: str, limit: int = 50) -> list[int]:
    return [r[0] for r in db.execute("SELECT id FROM messages WHERE content LIKE ? ORDER BY id DESC LIMIT ?",
                                     (f"%{q}%", limit))]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.bench search")
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "h.sqlite3"
        build(path, args.messages)
        store = Store(path)
        triggers = [r[0] for r in store.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages_fts%'")]
        for name in triggers:                   # make it an old file again (whatever its triggers are named now)
            store.db.execute(f"DROP TRIGGER {name}")
        store.db.execute("DROP TABLE messages_fts")
        t0 = time.perf_counter()
        ensure_search_index(store.db)
        migrate_ms = (time.perf_counter() - t0) * 1000
        result: dict[str, object] = {"bench": "search", "messages": args.messages, "migration_ms": migrate_ms}
        for label, q in (("rare_en", "zygomorphic"), ("rare_zh", "实时天气预报"), ("common", "latency")):
            ours, base = [], []
            for _ in range(args.rounds):
                t = time.perf_counter()
                hits = store.search(q)
                ours.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                ids = like(store.db, q)
                base.append((time.perf_counter() - t) * 1000)
            assert [h.message_id for h in hits] == ids, label
            o, b = statistics.median(ours), statistics.median(base)
            result[label] = {"hits": len(ids), "ours_ms": o, "like_scan_ms": b, "speedup": b / o if o else None}
        result["size_mb"] = path.stat().st_size / 1e6
        store.close()
    emit(result)
    return 0
