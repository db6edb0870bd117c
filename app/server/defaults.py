"""Where Brook's API listens unless told otherwise, and where its key comes from: plain constants, so the window
names them (Server → Serve this model …) without importing the server (uvicorn, starlette, pydantic) at start-up."""

from __future__ import annotations

#: Address the API binds by default (loopback: this machine only).
DEFAULT_HOST = "127.0.0.1"
#: TCP port the API listens on by default (0 asks the OS for a free one).
DEFAULT_PORT = 8080
#: Environment variable holding the server's API key (so it need not appear in the process list).
API_KEY_ENV = "BROOK_API_KEY"
