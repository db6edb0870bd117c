"""The message list: the virtual chat view and its widget pool, a message widget, its keys, menu and actions, the
markdown view (``markdown_view``: what a reply shows; ``patched_view``: its document patched piece by piece;
``sealed_view``: its live document and, for a long message, the sealed ``segments`` above it; ``view_links``:
the link policy; ``rich_text``: helpers of the documents), formulas, the render tick (``coalescer``) and garbage
collection off the frame path (``collector``)."""
