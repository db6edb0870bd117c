"""A reply's stream timeline stored with it (app.core.history.timelines): compact, exact, written once at the end,
migrated into older history files, deleted with its message or chat (real SQLite files, scripted engine)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from app.core.chat.session import ChatSession
from app.core.conversation import MessageStatus
from app.core.history import timelines as ts
from app.core.history.store import SCHEMA_VERSION, Store
from app.core.streaming.generation import StreamSettings
from app.core.streaming.metrics import StreamMetrics
from app.core.streaming.timeline import snapshot, timeline_json
from app.engine.scripted import ScriptedEngine
from tests.core.chat.test_session import Recorder, run, until
from tests.helpers.history import write_v1_history

pytestmark = pytest.mark.timeout(60)


def _recorded(n: int, seed: int = 1, stopped: bool = False) -> StreamMetrics:
    """``n`` chunks with a model's irregular rhythm (~70 tok/s), queue waits, batched dequeues, ticks of 1-3."""
    rnd = random.Random(seed)
    m = StreamMetrics(t_request=1000.0)
    m.t_slot = 1000.0123456
    t = m.t_slot + 0.2718
    for i in range(n):
        t += rnd.uniform(0.010, 0.019)
        m.on_produced(t, 1)
        waited = rnd.uniform(0.001, 0.2) if i % 97 == 5 else 0.0
        m.on_enqueued(t + rnd.uniform(2e-5, 9e-5) + waited, depth=rnd.randint(1, 3), waited_s=waited,
                      n_chars=rnd.randint(1, 7))
        m.on_dequeued(t + rnd.uniform(0.0001, 0.004))
    i = 0
    while i < n:
        k = min(rnd.randint(1, 3), n - i)
        m.on_painted(m.dequeued[i + k - 1] + rnd.uniform(0.001, 0.016), k, rnd.uniform(0.0002, 0.004))
        i += k
    m.t_end = t + 0.003
    if stopped:
        m.t_stop, m.t_worker_done = t - 0.01, t + 0.0042
    return m


def test_the_stored_form_reads_back_exactly_and_keeps_every_time_to_10_microseconds() -> None:
    m = _recorded(300, stopped=True)
    d = ts.from_metrics(m, reply_created=1700000000.123)
    blob = ts.encode(d)
    assert ts.decode(blob) == d                                      # exact
    assert ts.decode(ts.encode(json.loads(json.dumps(d)))) == d        # and through an export's JSON text
    edited = json.loads(json.dumps(d))
    edited["chunks"]["painted_ms"][3] += 0.25                          # not each tick's time: kept as it is
    assert ts.decode(ts.encode(edited)) == edited
    tl, live = ts.to_timeline(d), snapshot(m)
    for name in ("produced", "enqueued", "dequeued", "painted", "wait", "tick_at", "tick_cost"):
        a, b = getattr(tl, name), getattr(live, name)
        assert len(a) == len(b) == (300 if name[:4] != "tick" else len(live.tick_at)), name
        assert abs(a - b).max() <= 0.005 + 1e-9, name                  # ms
    for name in ("depth", "chars", "tick_chunks"):
        assert getattr(tl, name).tolist() == getattr(live, name).tolist(), name
    for name in ("request", "end", "stop", "worker_done"):
        assert getattr(tl, name) == pytest.approx(getattr(live, name), abs=0.005), name
    assert tl.prefill == pytest.approx(live.prefill, abs=0.005)
    assert d["reply_created"] == 1700000000.123 and d["stop_ms"] is not None


def test_the_stored_form_is_a_tenth_of_the_plain_json() -> None:
    m = _recorded(1000, seed=2)
    stored = len(ts.encode(ts.from_metrics(m)))
    plain = len(timeline_json(m, "x" * sum(m.chars)))
    assert stored < plain / 10, (stored, plain)                       # ~8 KB against ~90 KB per 1,000 tokens


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(version=9), "version"),
    (lambda d: d["chunks"].update(produced_ms=[1.0, "x"]), "chunks.produced_ms"),
    (lambda d: d["chunks"].update(chars=[1.5]), "chunks.chars"),
    (lambda d: d["ticks"].pop("chunks") and d["ticks"].update(chunks=None), "ticks.chunks"),
    (lambda d: d.update(prefill_ms=[1.0]), "prefill_ms"),
    (lambda d: d.update(end_ms="late"), "end_ms"),
    (lambda d: d.update(chunks=[]), "chunks must be an object"),
])
def test_a_bad_timeline_is_refused_naming_the_field(change, words: str) -> None:
    d = ts.from_metrics(_recorded(5))
    change(d)
    with pytest.raises(ValueError, match=words):
        ts.encode(d)
    with pytest.raises(ValueError, match="not a stored timeline"):
        ts.decode(b"garbage")


def test_an_old_history_file_gets_the_timelines_table(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    write_v1_history(path, """
        INSERT INTO messages VALUES (1, 1, 'user', 'hi', 'done', NULL, NULL, NULL, NULL, NULL, 1.5);
        INSERT INTO messages VALUES (2, 1, 'assistant', 'hello', 'done', 'm', NULL, 'stop', NULL, NULL, 1.6);
    """)
    store = Store(path)
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2
    assert ts.has_table(store.db) and store.load_timeline(2) is None
    d = ts.from_metrics(_recorded(4), 1.6)
    store.save_timeline(2, d)
    store.close()
    again = Store(path)                                               # idempotent on the next open
    assert again.load_timeline(2) == d and [m.text for m in again.load_conversation(1).messages] == ["hi", "hello"]


def test_finished_and_stopped_replies_store_their_timeline_once_and_deleting_removes_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    writes: list[int] = []
    save = store.save_timeline

    def counted(message_id: int, timeline: dict, behind=None) -> int:
        writes.append(message_id)
        return save(message_id, timeline, behind)

    store.save_timeline = counted  # type: ignore[method-assign]
    engine = ScriptedEngine(tokens_per_s=0)
    session = ChatSession(engine, store=store, listener=Recorder())

    async def main() -> None:
        assert await session.load()
        done = session.send("short")
        assert done is not None
        await until(lambda: done.status.final and not session.generating)
        await until(lambda: bool(writes))           # once the figures are final (no tick paints here: grace)
        engine.tokens_per_s, engine.repeat = 300, 30
        stopped = session.send("long")
        assert stopped is not None
        await until(lambda: stopped.chunks > 10)
        session.stop()
        await until(lambda: len(writes) == 2)
        # nothing paints here: the figures become final after the paint grace; no write before that, none after
        await asyncio.sleep(StreamSettings().paint_grace_s * 1.5)
        assert writes == [done.db_id, stopped.db_id]
        for reply in (done, stopped):
            assert reply.db_id is not None
            d = store.load_timeline(reply.db_id)
            assert d is not None and d["reply_created"] == reply.created
            assert sum(d["chunks"]["chars"]) == len(reply.text)
            assert len(d["chunks"]["produced_ms"]) >= reply.chunks
        assert store.load_timeline(stopped.db_id or 0)["stop_ms"] is not None              # type: ignore[index]
        assert store.load_timeline(done.db_id or 0)["stop_ms"] is None        # ended by itself: not stopped
        assert done.metrics["stop_latency_ms"] is None and stopped.metrics["stop_latency_ms"] is not None
        assert stopped.status is MessageStatus.STOPPED
        store.delete_message(stopped.db_id or 0)
        assert store.load_timeline(stopped.db_id or 0) is None
        store.delete_conversation(session.conversation.id or 0)
        assert store.db.execute("SELECT COUNT(*) FROM timelines").fetchone()[0] == 0
        await session.shutdown()

    run(main())


def test_the_timeline_is_encoded_off_the_loop_and_a_reply_deleted_meanwhile_is_not_written(tmp_path: Path,
                                                                                           monkeypatch, caplog) -> None:
    import logging
    import threading

    caplog.set_level(logging.WARNING, logger="brook.timeline")

    store = Store(tmp_path / "h.sqlite3")
    threads: list[str] = []
    encode_metrics = ts.encode_metrics
    release = threading.Event()

    def watched(m, created):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        release.wait(30)                 # still encoding while the test acts on the loop
        return encode_metrics(m, created)

    monkeypatch.setattr(ts, "encode_metrics", watched)
    session = ChatSession(ScriptedEngine(tokens_per_s=0), store=store, listener=Recorder())

    async def main() -> None:
        assert await session.load()
        kept = session.send("one")
        assert kept is not None
        await until(lambda: len(threads) == 1)
        assert threads[0] != threading.current_thread().name            # not the loop's thread
        release.set()
        await until(lambda: store.load_timeline(kept.db_id or 0) is not None)
        release.clear()
        gone = session.send("two")
        assert gone is not None
        await until(lambda: len(threads) == 2)
        session.conversation.messages.remove(gone)                       # deleted while it is encoded
        store.delete_message(gone.db_id or 0)
        release.set()
        await session.shutdown()                                          # waits for the write in flight
        assert not session._timelines.pending                            # type: ignore[union-attr]
        assert [r[0] for r in store.db.execute("SELECT message_id FROM timelines")] == [kept.db_id]
        assert not [r for r in caplog.records if r.name == "brook.timeline"]     # not even tried

    run(main())
