"""The link policy, defined once: which addresses may open (used by the HTML renderer and by the view).

* links are clickable (``<a href>``) only for ``http:``, ``https:`` and ``mailto:`` addresses; any other
  address (``javascript:``, ``file:``, ``data:``, relative, ``brook-copy:`` …) is inert text: the label, then
  the address in parentheses;
* images never load anything: ``![alt](url)`` shows ``alt`` and the address (a link when http/https).

The view opens a clicked address only when :func:`is_safe_url` says so (through the desktop, never inside the
view); its own actions use the schemes below, which are never safe, so a model cannot forge them as links.
A link whose text is itself an address of another site (``[https://bank.example.com](https://evil.example)``)
is asked about before it opens (:func:`misleading`), and the view's tooltip always shows the real target.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import unquote, urlsplit

#: Schemes of addresses that are clickable and that the view opens (with the colon, lower case).
SAFE_SCHEMES: tuple[str, ...] = ("http:", "https:", "mailto:")
#: Schemes of image addresses shown as a link.
IMAGE_LINK_SCHEMES: tuple[str, ...] = ("http:", "https:")
#: The view's own action: copy the raw code of code block N (``brook-copy:N``, ``brook-copy:tN`` in reasoning).
COPY_SCHEME = "brook-copy"
#: The view's own action: fold or unfold the reasoning section (``brook-think:toggle``).
THINK_SCHEME = "brook-think"


def is_safe_url(url: str, schemes: Sequence[str] = SAFE_SCHEMES) -> bool:
    """Whether ``url`` may be a clickable link: its scheme (case-insensitive) is one of ``schemes``."""
    return url.strip().lower().startswith(tuple(schemes))


_EMAIL = re.compile(r"^(?:mailto:)?([^\s@<>()]+@[^\s@<>()]+\.[^\s@<>()]+)$", re.IGNORECASE)
_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*:(?://)?)?(?:[^\s@/:]+@)?(\[[0-9a-f:.]+\]|[^\s/:?#\[\]@]+\.[^\s/:?#\[\]@]+)"
                      r"(?::\d*)?(?:[/?#]\S*)?$", re.IGNORECASE)


def _host(host: str) -> str:
    h = host.strip().strip("[]").rstrip(".").lower()
    try:
        h = h.encode("idna").decode("ascii")
    except UnicodeError:
        pass
    return h.removeprefix("www.")


def named_target(text: str) -> str | None:
    """The host (or e-mail address) a link's *text* names when the text looks like an address — a URL,
    ``www.x.org``, ``bank.example.com``, ``someone@example.org`` — else None (ordinary words)."""
    t = text.strip().strip("<>")
    if not t or any(c.isspace() for c in t):
        return None
    m = _EMAIL.match(t)
    if m and "://" not in t:
        return m.group(1).lower()
    m = _ADDRESS.match(t)
    if m is None:
        return None
    host = m.group(1)
    if not host.startswith("[") and not re.search(r"\.[^\W\d_]{2,}$|\.xn--[a-z0-9-]+$|^\d+(\.\d+){3}$", host,
                                                  re.IGNORECASE):
        return None            # "e.g." or "1.5": not an address
    return _host(host)


def real_target(href: str) -> str:
    """The host (or e-mail address, for ``mailto:``) a link really opens."""
    if href.strip().lower().startswith("mailto:"):
        return unquote(href.strip()[7:].split("?", 1)[0]).lower()
    try:
        return _host(urlsplit(href.strip()).hostname or "")
    except ValueError:
        return ""


def misleading(text: str, href: str) -> bool:
    """True when a link's ``text`` names another address than the one ``href`` opens (a different host, or a
    different e-mail address): ``[https://bank.example.com](https://evil.example)``. Text that is not an address
    ("the docs") is never misleading; ``www.`` is ignored on both sides. An http(s) address with a user part
    (``https://bank.example.com@evil.example`` opens evil.example) is always misleading."""
    try:
        if not href.strip().lower().startswith("mailto:") and urlsplit(href.strip()).username is not None:
            return True
    except ValueError:
        return True
    named = named_target(text)
    if named is None:
        return False
    return named != real_target(href)
