"""The SQLite history: the store and its schema migrations (``store``, ``columns``), recovery of damaged files,
search, export/import, stored reply timelines."""
