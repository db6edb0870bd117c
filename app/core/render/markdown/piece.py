"""The separator of a block's *pieces* (see :mod:`.html`), in a room of its own so every HTML room can use it."""

#: Separates the *pieces* of a block's HTML: an HTML comment (invisible to any HTML reader).
PIECE = "<!--brook-piece-->"
