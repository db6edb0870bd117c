"""The link policy, defined once: which addresses may open (used by the HTML renderer and by the view).

* links are clickable (``<a href>``) only for ``http:``, ``https:`` and ``mailto:`` addresses; any other
  address (``javascript:``, ``file:``, ``data:``, relative, ``brook-copy:`` …) is inert text: the label, then
  the address in parentheses;
* images never load anything: ``![alt](url)`` shows ``alt`` and the address (a link when http/https).

The view opens a clicked address only when :func:`is_safe_url` says so (through the desktop, never inside the
view); its own actions use the schemes below, which are never safe, so a model cannot forge them as links.
"""

from __future__ import annotations

from collections.abc import Sequence

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
