"""The Hub token (for gated and private repos), kept in the OS keyring like the remote servers' API keys.

Stored with ``app.core.connections.KeyStore`` under the service ``Brook`` and the name ``TOKEN_NAME``; never in
a settings file. Without a keyring it lasts for the session; ``HF_TOKEN`` (``huggingface_hub``'s own variable)
supplies one without storing it.
"""

from __future__ import annotations

from app.core.connections import KeyStore

TOKEN_NAME = "Hugging Face Hub token"
TOKEN_ENV = "HF_TOKEN"

_store: KeyStore | None = None


def token_store() -> KeyStore:
    """The process's one store (the keyring backend is looked up once)."""
    global _store
    if _store is None:
        _store = KeyStore(env=TOKEN_ENV)
    return _store


def hub_token() -> str | None:
    """The saved token, else ``HF_TOKEN``, else None."""
    return token_store().get(TOKEN_NAME)


def set_hub_token(token: str | None) -> str:
    """Save (``None``/empty: forget) the token; returns where it is kept (a sentence)."""
    return token_store().set(TOKEN_NAME, (token or "").strip() or None)
