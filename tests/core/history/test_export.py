"""Export to JSON/Markdown and import back, on real SQLite files: lossless, all or nothing, from the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.export import ChatImportError, export_json, export_markdown, import_file, import_json
from app.core.history.store import Store
from app.core.history.timelines import from_metrics
from tests.core.history.test_timeline_store import _recorded

ROOT = Path(__file__).resolve().parents[3]


def _fill(store: Store) -> tuple[Conversation, Conversation]:
    a = Conversation(title="Reverse a string", system_prompt="Answer briefly.", preset="Precise",
                     params={"temperature": 0.1, "top_k": 20})
    store.save_message(a, a.add(Message(Role.USER, "Reverse 'abc' in Python", created=1000.25)))
    r = a.add(Message(Role.ASSISTANT, "`'abc'[::-1]`", created=1001.5, model="SmolLM2-135M-Instruct.Q4_1",
                      params={"temperature": 0.1, "seed": 42, "stop": ["\n\n"]}, stop_reason="stop",
                      metrics={"ttft_ms": 80.5, "decode_tokens_per_s": 41.2, "decode_tokens": 9},
                      provenance={"model_file": "SmolLM2.gguf", "model_bytes": 100, "model_sha256": "ab" * 32,
                                  "chat_template": "GGUF tokenizer.chat_template"}))
    r.versions, r.version_index = [{"content": "an earlier reply", "status": "stopped", "created": 999.0}], 1
    store.save_message(a, r)
    store.save_timeline(r.db_id or 0, from_metrics(_recorded(40, stopped=True), r.created))
    b = Conversation(title="中文")
    store.save_message(b, b.add(Message(Role.USER, "你好，世界", created=2000.0)))
    e = b.add(Message(Role.ASSISTANT, "部分回", status=MessageStatus.TIMED_OUT, created=2001.0,
                      stop_reason="timeout", error="No first token within 120 s."))
    store.save_message(b, e)
    return a, b


def test_export_import_round_trip_is_lossless_field_by_field(tmp_path: Path) -> None:
    src = Store(tmp_path / "a.sqlite3")
    _fill(src)
    doc = export_json(src)
    text = json.dumps(doc, ensure_ascii=False)
    dst = Store(tmp_path / "b.sqlite3")
    ids = import_json(dst, json.loads(text)).ids
    dst.close()
    again = export_json(Store(tmp_path / "b.sqlite3"), ids)      # after a restart
    assert len(doc["conversations"]) == 2
    for before, after in zip(doc["conversations"], again["conversations"], strict=True):
        for key in ("title", "system_prompt", "preset", "params", "created", "updated"):
            assert after[key] == before[key], key
        for mb, ma in zip(before["messages"], after["messages"], strict=True):
            for key in ("role", "content", "status", "created", "model", "params", "stop_reason", "error",
                        "metrics", "provenance", "versions", "timeline"):
                assert ma[key] == mb[key], key
    first = again["conversations"][0]        # newest first: "中文" was updated last
    assert first["title"] == "中文" and first["messages"][1]["status"] == "timed out"
    assert again["conversations"][1]["messages"][1]["provenance"]["model_sha256"] == "ab" * 32
    assert again["conversations"][1]["messages"][1]["versions"]["others"][0]["content"] == "an earlier reply"
    timeline = again["conversations"][1]["messages"][1]["timeline"]       # the reply's stream timeline came along
    assert len(timeline["chunks"]["produced_ms"]) == 40 and timeline["stop_ms"] is not None
    assert [m["timeline"] for m in first["messages"]] == [None, None]


def test_markdown_has_messages_and_provenance(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.sqlite3")
    a, _b = _fill(store)
    md = export_markdown(store, [a.id or 0])
    assert md.startswith("# Reverse a string")
    assert "> Answer briefly." in md and "Reverse 'abc' in Python" in md and "`'abc'[::-1]`" in md
    for row in ("- SHA-256: " + "ab" * 32, "- seed: 42", "- TTFT: 80 ms", "- tokens/s: 41.2", "- stop reason: stop",
                "- chat template: GGUF tokenizer.chat_template", "- model file: SmolLM2.gguf"):
        assert row in md
    assert "Other versions of this reply (1; this one is 2 of 2)" in md and "an earlier reply" in md


@pytest.mark.parametrize("doc, words", [
    ({"format": "other"}, "not a Brook chat export"),
    ({"format": "brook-chats", "version": 99, "conversations": []}, "newer version"),
    ({"format": "brook-chats", "version": 1, "conversations": [
        {"title": "ok", "created": 1, "updated": 1, "messages": []},
        {"title": "bad", "created": 1, "updated": 1,
         "messages": [{"role": "wizard", "content": "x", "status": "done", "created": 1}]}]},
     r'chat 2 \("bad"\), message 1, field role: must be one of'),
    ({"format": "brook-chats", "version": 1, "conversations": [
        {"title": "t", "created": 1, "updated": 1,
         "messages": [{"role": "assistant", "content": "x", "status": "done", "created": 1,
                       "timeline": {"version": 1, "chunks": {"produced_ms": ["soon"]}, "ticks": {}}}]}]},
     "message 1, field timeline: timeline: chunks.produced_ms"),
])
def test_bad_import_is_refused_with_a_reason_and_imports_nothing(tmp_path: Path, doc: dict, words: str) -> None:
    store = Store(tmp_path / "a.sqlite3")
    with pytest.raises(ChatImportError, match=words):
        import_json(store, doc)
    assert store.list_conversations() == []
    bad = tmp_path / "x.json"
    bad.write_text("{not json", "utf-8")
    with pytest.raises(ChatImportError, match="not JSON"):
        import_file(store, bad)


def test_command_line_export_then_import(tmp_path: Path) -> None:
    env = {**os.environ, "BROOK_DATA_DIR": str(tmp_path / "data"), "BROOK_CONFIG_DIR": str(tmp_path / "cfg")}
    (tmp_path / "data").mkdir()
    store = Store(tmp_path / "data" / "history.sqlite3")
    _fill(store)
    store.close()
    out = subprocess.run([sys.executable, "main.py", "--export", str(tmp_path / "backup")], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    assert "exported 2 chat(s)" in out.stdout
    [js] = (tmp_path / "backup").glob("brook-chats-*.json")
    [md] = (tmp_path / "backup").glob("brook-chats-*.md")
    assert "你好，世界" in md.read_text("utf-8")
    env["BROOK_DATA_DIR"] = str(tmp_path / "data2")
    out = subprocess.run([sys.executable, "main.py", "--import", str(js)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    assert "imported 2 chat(s)" in out.stdout
    assert [c.title for c in Store(tmp_path / "data2" / "history.sqlite3").list_conversations()] == \
        ["中文", "Reverse a string"]
