"""Full-text search over every chat's messages (SQLite FTS5, ``trigram`` tokenizer).

FTS5's default ``unicode61`` tokenizer splits text at spaces and punctuation, so a Chinese sentence (no spaces)
is one token and a word in its middle is never found. The ``trigram`` tokenizer (SQLite ≥ 3.34) indexes every
3-character sequence instead, so any substring of 3 or more characters is found in any script, case-insensitively
(https://www.sqlite.org/fts5.html#the_trigram_tokenizer).

Queries: the query is split at whitespace into terms; a message matches when it contains every term. Terms of
3+ characters are looked up in the index (a quoted FTS5 phrase each, so ``"`` and FTS5 operators in the query are
plain text); terms of 1-2 characters (``猫``, ``AI``) cannot use a trigram index and are checked with ``instr`` on
the rows the long terms found, or by a scan of the messages (newest first, stopping at ``limit``) when every term is
short. Hits are ordered newest first. ``search_titles`` finds chats by their title (a scan: titles are short and few).

The index is an *external content* table over ``messages(content)`` kept in step by triggers, so it costs no second
copy of the text. It holds the finished messages: a reply is indexed when its status becomes final (``UNFINISHED``
rows are not in it), and again only when its text changes (a save of its figures alone is not re-indexed),
not at every autosave while it streams — re-indexing the whole text each second made saving a
long reply cost more and more on the GUI thread (a 1 MB reply: ~100 ms per save, against 3–7 ms for the row). A
reply that was streaming when the app died is marked stopped when the file is next opened
(``finish_interrupted``), which indexes it: its partial text is found. ``ensure_search_index`` creates the index
(and fills it from existing rows) on any history file that lacks it: that is the migration for files written
before search existed. Without FTS5/trigram support in the linked SQLite, search still works by scanning.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass

from app.core.history.clean import clean_text, clean_time

log = logging.getLogger("brook.search")

#: Characters of context on each side of the first match in a snippet.
SNIPPET_CONTEXT = 60
#: Shortest term the trigram index can look up (characters).
TRIGRAM = 3

#: Statuses of a reply still being written (``MessageStatus`` not final): such a row is not in the index.
UNFINISHED = ("waiting", "prefill", "generating")
_UNFINISHED_SQL = "('waiting', 'prefill', 'generating')"

_FTS_TABLE = """
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id', tokenize='trigram');
"""
_FTS_TRIGGERS = f"""
CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages WHEN new.status NOT IN {_UNFINISHED_SQL} BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages WHEN old.status NOT IN {_UNFINISHED_SQL} BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_au_changed AFTER UPDATE OF content, status ON messages
WHEN old.content IS NOT new.content OR (old.status IN {_UNFINISHED_SQL}) IS NOT (new.status IN {_UNFINISHED_SQL})
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.status NOT IN {_UNFINISHED_SQL};
    INSERT INTO messages_fts(rowid, content) SELECT new.id, new.content WHERE new.status NOT IN {_UNFINISHED_SQL};
END;
"""
_OLD_TRIGGERS = ("messages_fts_ai", "messages_fts_ad", "messages_fts_au")
#: The update trigger before it compared: it re-indexed a finished reply's whole text at every save, even one
#: that changed only its figures (the save after a reply's end: ~190 ms for 1 MB on the GUI thread).
_UNCOMPARED_TRIGGER = "messages_fts_au_final"
# (one update trigger, not one for the old row and one for the new: SQLite does not say in which order two
# triggers on one event fire, and the new row's insert must come after the old row's delete)



@dataclass(frozen=True, slots=True)
class SearchHit:
    """One message that matches a query.

    ``snippet`` is plain text around the first match (``…`` where it was cut); ``spans`` are ``(start, end)``
    character offsets into ``snippet`` of every term occurrence in it (for highlighting; never overlapping,
    ascending). ``created`` is the message's time (seconds since the epoch).
    """

    conversation_id: int
    message_id: int
    conversation_title: str
    role: str
    snippet: str
    spans: tuple[tuple[int, int], ...]
    created: float


@dataclass(frozen=True, slots=True)
class TitleHit:
    """A chat whose title matches a query: ``title`` whole, ``spans`` the ``(start, end)`` character offsets of
    every term in it (as ``SearchHit.spans``), ``updated`` the chat's last change (seconds since the epoch)."""

    conversation_id: int
    title: str
    spans: tuple[tuple[int, int], ...]
    updated: float


def has_search_index(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts'").fetchone() is not None


def ensure_search_index(db: sqlite3.Connection) -> bool:
    """Create the FTS5 index and its triggers if the history file has none, indexing the messages already there
    (one pass; ~1 s per 100 MB of text). Idempotent. Returns False when this SQLite has no FTS5 or no trigram
    tokenizer (search then scans)."""
    if has_search_index(db):
        if _has_trigger(db, "messages_fts_au"):     # a file of a Brook that indexed every autosave
            _index_finished_only(db)
        elif _has_trigger(db, _UNCOMPARED_TRIGGER):  # the index is right; only its update trigger is replaced
            _compare_before_indexing(db)
        return True
    try:
        db.execute("SAVEPOINT fts_migration")
        for statement in _split(_FTS_TABLE + _FTS_TRIGGERS):
            db.execute(statement)
        db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
        _drop_unfinished(db)
        db.execute("RELEASE fts_migration")
    except sqlite3.OperationalError as exc:
        db.execute("ROLLBACK TO fts_migration")
        db.execute("RELEASE fts_migration")
        log.warning("full-text search unavailable in this SQLite (%s); searching by scanning", exc)
        return False
    n = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    (log.info if n else log.debug)("search index created for %d existing messages", n)
    return True


def ensure_unfinished_index(db: sqlite3.Connection) -> None:
    """A partial index of the unfinished replies (none, or the few a crash left), so that ``finish_interrupted``
    at each open reads it, not the whole ``messages`` table."""
    db.execute(f"CREATE INDEX IF NOT EXISTS messages_unfinished ON messages(id) WHERE status IN {_UNFINISHED_SQL}")


def finish_interrupted(db: sqlite3.Connection) -> int:
    """Mark ``stopped`` the replies still unfinished in the file (the app died while they streamed; they are
    read back as stopped anyway), which puts their partial text in the index. Returns how many (0 when the file
    is damaged there: the reads that meet the damage repair it)."""
    try:
        return db.execute(f"UPDATE messages SET status = 'stopped' WHERE status IN {_UNFINISHED_SQL}").rowcount
    except sqlite3.DatabaseError as exc:
        log.warning("history: interrupted replies not marked stopped (%s)", exc)
        return 0


def _has_trigger(db: sqlite3.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)).fetchone() is not None


def _drop_unfinished(db: sqlite3.Connection) -> None:
    """Take the rows of unfinished replies out of an index that holds every row (after ``rebuild``, or the old
    triggers): their indexed text is their current text, which is what FTS5's ``delete`` needs."""
    db.execute("INSERT INTO messages_fts(messages_fts, rowid, content) "
               f"SELECT 'delete', id, content FROM messages WHERE status IN {_UNFINISHED_SQL}")


def _index_finished_only(db: sqlite3.Connection) -> None:
    """Replace the triggers that re-indexed a reply's whole text at every autosave (a 1 MB reply: ~100 ms on the
    GUI thread per save) by ones that index a reply when it ends; no text is indexed twice or lost."""
    db.execute("SAVEPOINT fts_triggers")
    for name in _OLD_TRIGGERS:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    _drop_unfinished(db)
    for statement in _split(_FTS_TRIGGERS):
        db.execute(statement)
    db.execute("RELEASE fts_triggers")


def _compare_before_indexing(db: sqlite3.Connection) -> None:
    """Replace the update trigger that re-indexed a finished row at any save by one that does only when its text
    or whether it is finished changed (the index holds the same rows under both: nothing to re-index)."""
    db.execute("SAVEPOINT fts_compare")
    db.execute(f"DROP TRIGGER IF EXISTS {_UNCOMPARED_TRIGGER}")
    db.execute(_split(_FTS_TRIGGERS)[-1])
    db.execute("RELEASE fts_compare")


def _split(script: str) -> list[str]:
    """Statements of ``script`` (the triggers' bodies contain ``;``: split at ``END;`` and top-level ``;``)."""
    out: list[str] = []
    buf: list[str] = []
    for line in script.strip().splitlines():
        buf.append(line)
        text = "\n".join(buf)
        if sqlite3.complete_statement(text):
            out.append(text)
            buf = []
    return out


def search(db: sqlite3.Connection, query: str, limit: int = 50) -> list[SearchHit]:
    """Messages containing every whitespace-separated term of ``query`` (case-insensitive), newest first, at
    most ``limit``. An empty or blank query gives ``[]``. Never raises for odd query text (quotes, ``*``,
    ``AND``, parentheses are searched for literally)."""
    terms = _terms(query)
    if not terms or limit <= 0:
        return []
    long_terms = [t for t in terms if len(t) >= TRIGRAM]
    short_terms = [t for t in terms if len(t) < TRIGRAM]
    where: list[str] = []
    args: list[object] = []
    if long_terms and has_search_index(db):
        # the index is the outer loop, walked newest first (FTS5 streams rowids in order): a common word stops
        # after ``limit`` hits instead of collecting every match and sorting
        match = " AND ".join('"' + t.replace('"', '""') + '"' for t in long_terms)
        sql = ("SELECT m.id, m.conversation_id, m.role, m.content, m.created, c.title FROM messages_fts f "
               "CROSS JOIN messages m ON m.id = f.rowid JOIN conversations c ON c.id = m.conversation_id "
               "WHERE messages_fts MATCH ? ")
        args.append(match)
        order = " ORDER BY f.rowid DESC LIMIT ?"
    else:
        short_terms = terms
        sql = ("SELECT m.id, m.conversation_id, m.role, m.content, m.created, c.title FROM messages m "
               "JOIN conversations c ON c.id = m.conversation_id WHERE 1 ")
        order = " ORDER BY m.id DESC LIMIT ?"
    for t in short_terms:
        # instr on lower() folds ASCII case only, as LIKE does; CJK has no case
        where.append("instr(lower(m.content), lower(?)) > 0")
        args.append(t)
    sql += "".join(" AND " + w for w in where) + order
    rows = db.execute(sql, (*args, limit)).fetchall()
    hits = []
    for r in rows:       # rows another program wrote may hold bytes or numbers: read as text, never raised
        snippet, spans = make_snippet(clean_text(r[3]) or "", terms)
        hits.append(SearchHit(conversation_id=r[1], message_id=r[0], conversation_title=clean_text(r[5]) or "",
                              role=clean_text(r[2]) or "", snippet=snippet, spans=spans, created=clean_time(r[4])))
    return hits


def search_titles(db: sqlite3.Connection, query: str, limit: int = 20) -> list[TitleHit]:
    """Chats whose title contains every whitespace-separated term of ``query`` (case-insensitive for ASCII, any
    length, any script: a scan with ``instr``; titles are short and few), most recently changed first, at most
    ``limit``. A blank query gives ``[]``."""
    terms = _terms(query)
    if not terms or limit <= 0:
        return []
    where = "".join(" AND instr(lower(title), lower(?)) > 0" for _ in terms)
    rows = db.execute(f"SELECT id, title, updated FROM conversations WHERE 1{where} "
                      "ORDER BY updated DESC, id DESC LIMIT ?", (*terms, limit)).fetchall()
    hits = []
    for conv_id, raw_title, updated in rows:
        title = clean_text(raw_title) or ""
        text, spans = make_snippet(title, terms, context=len(title) + 1)     # the whole title, with its spans
        hits.append(TitleHit(conversation_id=conv_id, title=text, spans=spans, updated=clean_time(updated)))
    return hits


def _terms(query: str) -> list[str]:
    seen: list[str] = []
    for t in query.split():
        if t.casefold() not in (s.casefold() for s in seen):
            seen.append(t)
    return seen


Spans = tuple[tuple[int, int], ...]


def make_snippet(text: str, terms: list[str], context: int = SNIPPET_CONTEXT) -> tuple[str, Spans]:
    """Plain-text excerpt of ``text`` around the first occurrence of any of ``terms`` (case-insensitive), with
    ``context`` characters on each side, line breaks shown as spaces, and the term spans inside it."""
    low = text.lower()
    if len(low) != len(text):                      # folding changed lengths (İ → i̇): offsets would drift
        low = text
    needles = [t.lower() if low is not text else t for t in terms]
    firsts = [i for i in (low.find(n) for n in needles) if i >= 0]
    first = min(firsts) if firsts else 0
    start = max(0, first - context)
    end = min(len(text), first + context + max((len(t) for t in terms), default=0))
    if start > 0:                                   # do not cut a word in half where there are spaces
        sp = text.find(" ", start, first)
        if sp != -1 and sp - start < 15:
            start = sp + 1
    excerpt = text[start:end].replace("\r", " ").replace("\n", " ").replace("\t", " ")
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    lowx = low[start:end]
    spans: list[tuple[int, int]] = []
    for needle in needles:
        i = lowx.find(needle)
        while i != -1 and needle:
            spans.append((len(prefix) + i, len(prefix) + i + len(needle)))
            i = lowx.find(needle, i + len(needle))
    merged: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return prefix + excerpt + suffix, tuple(merged)
