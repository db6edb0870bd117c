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
copy of the text. ``ensure_search_index`` creates it (and fills it from existing rows) on any history file that
lacks it: that is the migration for files written before search existed. Without FTS5/trigram support in the
linked SQLite, search still works by scanning.
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

_FTS_SCHEMA = """
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id', tokenize='trigram');
CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_au AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
"""


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
        return True
    try:
        db.execute("SAVEPOINT fts_migration")
        for statement in _split(_FTS_SCHEMA):
            db.execute(statement)
        db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
        db.execute("RELEASE fts_migration")
    except sqlite3.OperationalError as exc:
        db.execute("ROLLBACK TO fts_migration")
        db.execute("RELEASE fts_migration")
        log.warning("full-text search unavailable in this SQLite (%s); searching by scanning", exc)
        return False
    n = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    (log.info if n else log.debug)("search index created for %d existing messages", n)
    return True


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
