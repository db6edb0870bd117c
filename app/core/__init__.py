"""Brook's core, no Qt: the kernel (conversation, types, errors, text, settings, connections) and the features.

* :mod:`.chat` — the chat session and what a person does to a chat;
* :mod:`.streaming` — one reply from the engine to its ``Message``: stream, generation, scheduler, metrics;
* :mod:`.history` — the SQLite history: store, migrations, recovery, search, export/import, stored timelines;
* :mod:`.render` — markdown to HTML, code highlighting, formulas, plain-text previews, worker pools.
"""
