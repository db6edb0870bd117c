"""Regenerate keeps versions: switch between them, the prompt uses the shown one, all survive a restart."""

from __future__ import annotations

from pathlib import Path

from app.core.chat import versions
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.store import Store


def _reply(text: str, **kw) -> Message:  # type: ignore[no-untyped-def]
    return Message(Role.ASSISTANT, text, model="m", stop_reason="stop", **kw)


def test_regenerate_keeps_the_old_reply_and_switching_swaps_every_field(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation()
    store.save_message(conv, conv.add(Message(Role.USER, "name a colour")))
    r = conv.add(_reply("Red.", metrics={"ttft_ms": 10.0}, params={"seed": 1}))
    store.save_message(conv, r)
    assert versions.label(r) == "" and versions.count(r) == 1

    versions.begin_new_version(r)                  # what Regenerate does before the model writes again
    assert (r.text, r.status, r.version_index, versions.count(r)) == ("", MessageStatus.WAITING, 1, 2)
    assert not versions.show_version(r, 0)          # still generating: cannot switch
    r.append("Blue.")
    r.status, r.metrics, r.params = MessageStatus.DONE, {"ttft_ms": 20.0}, {"seed": 2}
    store.save_message(conv, r)
    assert versions.label(r) == "2/2"
    assert conv.prompt_messages()[-1]["content"] == "Blue."

    assert versions.show_version(r, 0)
    assert (r.text, r.metrics, r.params, versions.label(r)) == ("Red.", {"ttft_ms": 10.0}, {"seed": 1}, "1/2")
    assert conv.prompt_messages()[-1]["content"] == "Red."
    store.save_message(conv, r)
    store.close()

    again = Store(tmp_path / "h.sqlite3").load_conversation(conv.id or 0)
    r2 = again.messages[1]
    assert (r2.text, versions.label(r2)) == ("Red.", "1/2")
    assert versions.show_version(r2, 5)             # clamped to the last
    assert (r2.text, r2.params, versions.label(r2)) == ("Blue.", {"seed": 2}, "2/2")
    assert len(again.messages) == 2                 # versions are not extra messages


def test_a_third_version_after_switching_back_keeps_all_three() -> None:
    r = _reply("one")
    versions.begin_new_version(r)
    r.append("two")
    r.status = MessageStatus.DONE
    versions.show_version(r, 0)
    versions.begin_new_version(r)
    r.append("three")
    r.status = MessageStatus.STOPPED
    texts = []
    for i in range(versions.count(r)):
        versions.show_version(r, i)
        texts.append(r.text)
    assert sorted(texts) == ["one", "three", "two"] and versions.count(r) == 3


def test_an_empty_failed_reply_is_replaced_not_kept() -> None:
    r = Message(Role.ASSISTANT, "", status=MessageStatus.ERROR, error="model failed")
    versions.begin_new_version(r)
    assert versions.count(r) == 1 and r.error is None
