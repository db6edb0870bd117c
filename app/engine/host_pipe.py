"""One end of a duplex byte pipe between the window and an engine host, framed into messages.

``FramedPipe`` wraps a connected socket's file descriptor (``socket.socketpair``): each message is an 8-byte
big-endian length and that many bytes; ``send``/``recv`` pickle one object per message. It has the methods of
``multiprocessing.connection.Connection`` the host and the window use (``send_bytes``, ``recv_bytes``, ``send``,
``recv``, ``poll``, ``close``, ``fileno``), built on ``os.read``/``os.write`` and ``select.poll`` only, so the
engine host needs neither ``multiprocessing`` nor ``socket`` to talk (their imports were CPU the host spent
before it could load a model). Errors: ``EOFError`` when the other end closed, ``OSError`` when this end was
closed or the other end is gone (``BrokenPipeError``, ``ConnectionResetError``).
"""

from __future__ import annotations

import os
import pickle
import select
from typing import Any

_HEADER = 8


class FramedPipe:
    """Messages over the connected socket ``fd`` (this object owns it; see the module docstring). Writing a
    message is one call here (callers that send from several threads hold their own lock); reading is for one
    thread at a time."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def _check(self) -> int:
        if self._fd < 0:
            raise OSError("the pipe is closed")
        return self._fd

    def send_bytes(self, data: bytes) -> None:
        """Write one message of ``data`` whole (a short write is continued)."""
        fd = self._check()
        view = memoryview(len(data).to_bytes(_HEADER, "big") + data)
        while view:
            view = view[os.write(fd, view):]

    def send(self, obj: Any) -> None:
        self.send_bytes(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))

    def _read(self, fd: int, n: int) -> bytes:
        parts: list[bytes] = []
        while n:
            part = os.read(fd, n)
            if not part:
                raise EOFError("the other end of the pipe closed")
            parts.append(part)
            n -= len(part)
        return b"".join(parts)

    def recv_bytes(self) -> bytes:
        """The next message's bytes (waits for it)."""
        fd = self._check()
        return self._read(fd, int.from_bytes(self._read(fd, _HEADER), "big"))

    def recv(self) -> Any:
        return pickle.loads(self.recv_bytes())

    def poll(self, timeout: float | None = 0.0) -> bool:
        """Whether something can be read within ``timeout`` seconds (None: wait) — a message, or the end of the
        pipe, which ``recv`` then raises as ``EOFError``."""
        fd = self._check()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        ms = None if timeout is None else max(0, int(timeout * 1000 + 0.999))
        return bool(poller.poll(ms))
