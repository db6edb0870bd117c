"""The framed pipe between the window and an engine host: whole messages both ways over a socket pair, however
large; the end of the other side is ``EOFError``; a closed end refuses to work (no model)."""

from __future__ import annotations

import socket
import threading

import pytest

from app.engine.host_pipe import FramedPipe


def pair() -> tuple[FramedPipe, FramedPipe]:
    a, b = socket.socketpair()
    return FramedPipe(a.detach()), FramedPipe(b.detach())


def test_messages_arrive_whole_and_in_order_both_ways() -> None:
    a, b = pair()
    a.send(("chunk", 1, "héllo", 1, None))
    a.send_bytes(b"")
    b.send({"n": 3})
    assert b.recv() == ("chunk", 1, "héllo", 1, None)
    assert b.recv_bytes() == b""
    assert a.recv() == {"n": 3}
    a.close()
    b.close()


def test_a_message_larger_than_the_socket_buffer_is_written_and_read_whole() -> None:
    a, b = pair()
    big = bytes(range(256)) * 40_000          # 10 MB: many short writes and reads
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(b.recv_bytes()))
    reader.start()
    a.send_bytes(big)
    reader.join()
    assert got == [big]


def test_poll_says_whether_a_message_or_the_end_is_there() -> None:
    a, b = pair()
    assert not b.poll(0)
    a.send("x")
    assert b.poll(0) and b.poll(None)
    assert b.recv() == "x" and not b.poll(0.01)
    a.close()
    assert b.poll(0)                           # the end can be read: recv says so
    with pytest.raises(EOFError):
        b.recv()


def test_a_closed_end_raises_oserror_and_the_other_end_sees_it_gone() -> None:
    a, b = pair()
    a.close()
    a.close()                                  # idempotent
    assert a.closed
    for use in (lambda: a.send("x"), a.recv, lambda: a.poll(0)):
        with pytest.raises(OSError):
            use()
    b.close()


def test_writing_to_an_end_whose_other_side_is_gone_raises_oserror() -> None:
    a, b = pair()
    b.close()
    with pytest.raises(OSError):
        for _ in range(100):                   # the first write may still be buffered
            a.send_bytes(b"x" * 100_000)
