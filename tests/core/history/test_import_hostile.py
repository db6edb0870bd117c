"""Hostile exports and hostile history rows: an import is checked completely before anything is written (a
``brook:`` sentence naming the chat, the message and the field), and every read of the history is tolerant (a
row that cannot become a message is a damaged message, never an exception)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core.conversation import MessageStatus, Role
from app.core.history.export import ChatImportError, export_json, import_file, import_json, write_exports
from app.core.history.store import Store
from app.core.streaming.provenance import describe
from tests.helpers import ROOT


def _doc(**reply: Any) -> dict[str, Any]:
    msg = {"role": "assistant", "content": "hi", "status": "done", "created": 1.0, **reply}
    return {"format": "brook-chats", "version": 1, "conversations": [
        {"title": "ok", "created": 1, "updated": 1, "messages": []},
        {"title": "Hostile", "created": 2, "updated": 2,
         "messages": [{"role": "user", "content": "q", "status": "done", "created": 1}, msg]}]}


@pytest.mark.parametrize("reply, field", [
    ({"metrics": {"ttft_ms": "soon"}}, "metrics.ttft_ms: must be a number"),
    ({"metrics": {"decode_tokens": 2.5}}, "metrics.decode_tokens: must be a whole number"),
    ({"created": 1e300}, "created: 1e+300 is out of range"),
    ({"created": float("inf")}, "created: must be a finite number"),
    ({"created": float("nan")}, "created: must be a finite number"),
    ({"created": "yesterday"}, "created: must be a number"),
    ({"params": {"temperature": "hot"}}, "params.temperature: must be a number"),
    ({"params": {"top_p": 7}}, "params.top_p: 7 is out of range"),
    ({"content": {"text": "hi"}}, "content: must be text, not an object"),
    ({"model": ["a"]}, "model: must be text, not a list"),
    ({"error": 5}, "error: must be text"),
    ({"provenance": {"model_bytes": "big"}}, "provenance.model_bytes: must be a whole number"),
    ({"provenance": {"extra": [[[[[[[[[["ten deep"]]]]]]]]]]}}, "provenance: extra: is nested more than 8 deep"),
    ({"metrics": {"extra": [1, float("nan")]}}, "metrics: extra: must be a finite number"),
    ({"versions": {"shown": "x", "others": []}}, "versions.shown: must be a whole number"),
    ({"versions": {"shown": 0, "others": [{"content": 5}]}}, "versions.others.0.content: must be text"),
    ({"status": "lost"}, "status: must be one of"),
])
def test_a_field_of_the_wrong_type_or_range_is_refused_naming_chat_message_and_field(
        tmp_path: Path, reply: dict[str, Any], field: str) -> None:
    store = Store(tmp_path / "h.sqlite3")
    with pytest.raises(ChatImportError) as err:
        import_json(store, _doc(**reply))
    assert str(err.value).startswith('chat 2 ("Hostile"), message 2, field ')
    assert field in str(err.value)
    assert store.list_conversations() == []              # nothing written, not even the good first chat


@pytest.mark.parametrize("chat, field", [
    ({"title": {"a": 1}}, "field title: must be text"),
    ({"created": float("inf")}, "field created: must be a finite number"),
    ({"updated": -5}, "field updated: -5 is out of range"),
    ({"params": {"max_tokens": "all"}}, "field params.max_tokens"),
    ({"messages": {"0": {}}}, "field messages: must be a list"),
])
def test_a_bad_chat_field_is_refused(tmp_path: Path, chat: dict[str, Any], field: str) -> None:
    doc = _doc()
    doc["conversations"][1].update(chat)
    with pytest.raises(ChatImportError, match=field):
        import_json(Store(":memory:"), doc)


def test_json_literals_infinity_and_nan_in_a_file_are_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    for literal in ("Infinity", "-Infinity", "NaN", "1e999"):
        f = tmp_path / "x.json"
        f.write_text(json.dumps(_doc()).replace('"created": 1.0', f'"created": {literal}'), "utf-8")
        with pytest.raises(ChatImportError, match="message 2, field created"):
            import_file(store, f)
    assert store.list_conversations() == []


def test_deep_nesting_is_refused_with_a_sentence(tmp_path: Path) -> None:
    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000 + "]" * 100_000, "utf-8")
    with pytest.raises(ChatImportError, match="nested too deeply"):
        import_file(Store(":memory:"), f)
    deep: Any = 1
    for _ in range(5_000):
        deep = {"a": deep}
    with pytest.raises(ChatImportError, match="field params: extra: is nested more than 8 deep"):
        import_json(Store(":memory:"), _doc(params={"extra": deep}))
    newer = _doc(provenance={"model_file": "m.gguf", "engine_host": {"pid": 7, "limits": [1, 2]}})
    store = Store(":memory:")
    import_json(store, newer)                     # a newer Brook's field, plain JSON: kept
    assert export_json(store)["conversations"][0]["messages"][1]["provenance"]["engine_host"] == \
        {"pid": 7, "limits": [1, 2]}
    doc = _doc(timeline={"version": 1, "chunks": {}, "ticks": {}, "extra": deep})     # unknown: left out
    store = Store(":memory:")
    import_json(store, doc)
    assert "extra" not in json.dumps(export_json(store))


def test_lone_surrogates_become_replacement_characters_and_export_works(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    doc = _doc(content="a\ud800b", model="m\udfff", metrics={"note": "x\ud83d"})
    doc["conversations"][1]["title"] = "t\udc00"
    ids = import_json(store, doc).ids
    conv = store.load_conversation(ids[1])
    assert conv.title == "t\ufffd" and conv.messages[1].text == "a\ufffdb" and conv.messages[1].model == "m\ufffd"
    assert write_exports(store, tmp_path / "out")


def test_the_same_file_twice_skips_the_chats_already_there(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    f = tmp_path / "x.json"
    f.write_text(json.dumps(_doc()), "utf-8")
    first = import_file(store, f)
    assert len(first.ids) == 2 and first.skipped == []
    again = import_file(store, f)
    assert again.ids == [] and again.skipped == ["ok", "Hostile"]
    assert "2 already in the history skipped" in again.summary(f)
    assert len(store.list_conversations()) == 2
    changed = _doc(content="a different reply")          # same title and time, other messages: a new chat
    assert len(import_json(store, changed).ids) == 1 and len(store.list_conversations()) == 3


def _hostile_rows(path: Path) -> tuple[Store, int]:
    """A history whose rows another program (or an import made before it was checked) wrote badly."""
    store = Store(path)
    db = store.db
    cid = int(db.execute("INSERT INTO conversations(title, created, updated, params) VALUES (?,?,?,?)",
                         ("Hostile", 1e300, float("inf"), '{"temperature": "hot", "top_k": 40}')).lastrowid or 0)
    rows = [
        ("user", "q", "done", 1.0, None, None, None),
        ("assistant", "figures", "done", "yesterday", '{"ttft_ms": "soon", "decode_tokens_per_s": "fast", '
         '"decode_tokens": 12}', '{"model_bytes": "big", "model_file": "m.gguf"}', '{"shown": "x", "others": 5}'),
        ("wizard", "a spell", "done", 2.0, None, None, None),
        ("assistant", "lost", "vanished", -1.0, "[1, 2]", '"text"', '{"shown": 1, "others": [{"content": 5}, '
         '{"content": "old", "status": "??", "created": 1e300, "metrics": {"ttft_ms": "x"}}]}'),
        ("assistant", b"\xff\xfe bytes", "done", 3.0, "[" * 5000 + "]" * 5000, None, None),
    ]
    for role, content, status, created, metrics, prov, versions in rows:
        db.execute("INSERT INTO messages(conversation_id, role, content, status, created, metrics, provenance, "
                   "versions) VALUES (?,?,?,?,?,?,?,?)", (cid, role, content, status, created, metrics, prov, versions))
    return store, cid


def test_every_read_of_hostile_rows_is_tolerant(tmp_path: Path) -> None:
    store, cid = _hostile_rows(tmp_path / "h.sqlite3")
    [info] = store.list_conversations()
    assert info.title == "Hostile" and info.updated == 0.0
    conv = store.load_conversation(cid)
    assert conv.params == {"top_k": 40}
    _q, figures, spell, lost, raw = conv.messages
    assert figures.metrics == {"decode_tokens": 12} and figures.created == 0.0
    assert figures.provenance == {"model_file": "m.gguf"} and figures.versions is None
    assert ("tokens", "12") in describe(figures)
    assert spell.role is Role.ASSISTANT and spell.status is MessageStatus.ERROR and spell.text == "a spell"
    assert "role 'wizard' is unknown" in (spell.error or "")
    assert lost.status is MessageStatus.ERROR and "status 'vanished'" in (lost.error or "")
    assert lost.metrics is None and lost.provenance is None
    assert lost.versions == [{"content": "old", "status": "stopped", "created": 0.0, "model": None, "params": None,
                              "stop_reason": None, "error": None, "metrics": None, "provenance": None}]
    assert raw.status is MessageStatus.ERROR and "\ufffd" in raw.text and raw.metrics is None
    doc = export_json(store)
    assert doc["conversations"][0]["created"] == 0.0
    md, js = sorted(write_exports(store, tmp_path / "out"), key=lambda p: p.suffix)[::-1][:2]
    assert "a spell" in md.read_text("utf-8") and json.loads(js.read_text("utf-8"))["conversations"]
    exported = json.loads(js.read_text("utf-8"))
    again = Store(tmp_path / "again.sqlite3")
    assert len(import_json(again, exported).ids) == 1       # what a tolerant read gives imports cleanly


def test_command_line_export_of_a_hostile_history_works(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    store, _cid = _hostile_rows(data / "history.sqlite3")
    store.close()
    env = {**os.environ, "BROOK_DATA_DIR": str(data), "BROOK_CONFIG_DIR": str(tmp_path / "cfg")}
    out = subprocess.run([sys.executable, "main.py", "--export", str(tmp_path / "backup")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "exported 1 chat(s)" in out.stdout and "Traceback" not in out.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_doc(metrics={"ttft_ms": "soon"})), "utf-8")
    out = subprocess.run([sys.executable, "main.py", "--import", str(bad)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip().endswith('brook: chat 2 ("Hostile"), message 2, field metrics.ttft_ms: must be a '
                                       'number, not "soon".')


def test_search_over_hostile_rows_is_tolerant(tmp_path: Path) -> None:
    store, _cid = _hostile_rows(tmp_path / "h.sqlite3")
    store.db.execute("INSERT INTO conversations(title, created, updated) VALUES (?, 1, 'soon')", (b"\xffspell book",))
    store.db.execute("INSERT INTO conversations(title, created, updated) VALUES (?, 1, 1)", (12345,))
    [hit] = store.search("spell")
    assert hit.snippet == "a spell" and hit.conversation_title == "Hostile"
    assert {h.title for h in store.search_titles("spell")} == {"\ufffdspell book"}
    assert [h.title for h in store.search_titles("234")] == ["12345"]
    assert [h.snippet for h in store.search("by")] == ["\ufffd\ufffd bytes"]          # a blob's text, decoded


def test_hostile_stored_timelines_are_left_out_in_bounded_memory(tmp_path: Path) -> None:
    import resource
    import zlib

    store, cid = _hostile_rows(tmp_path / "h.sqlite3")
    ids = [m.db_id for m in store.load_conversation(cid).messages]
    blobs = [zlib.compress(b"[" + b"0," * (100 << 20) + b"0]", 9),      # 200 MB unpacked from ~200 KB
             zlib.compress(b"[" * 100_000 + b"]" * 100_000),
             "text, not a blob", b"garbage"]
    for mid, blob in zip(ids, blobs, strict=False):
        store.db.execute("INSERT INTO timelines(message_id, data) VALUES (?, ?)", (mid, blob))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert [store.load_timeline(mid or 0) for mid in ids[:4]] == [None] * 4
    assert export_json(store)["conversations"][0]["messages"][0]["timeline"] is None
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024 < 150     # MB; the bomb is 200
