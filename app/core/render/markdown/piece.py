"""The separator of a block's *pieces* (see :mod:`.html`), in a room of its own so every HTML room can use it."""

#: Separates the *pieces* of a block's HTML: an HTML comment (invisible to any HTML reader).
PIECE = "<!--brook-piece-->"


def block_pieces(block: str) -> list[str]:
    """The pieces of one block's HTML (or of one part of ``tail_blocks``: an open table's finished row group is
    a part of its own that ends with ``PIECE``, so that the parts still join to the tail's HTML)."""
    pieces = block.split(PIECE)
    if len(pieces) > 1 and not pieces[-1]:
        pieces.pop()
    return pieces
