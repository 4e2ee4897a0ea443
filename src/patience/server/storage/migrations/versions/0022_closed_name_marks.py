"""A closed account's display name is a mark in no language, ``<closed:`` and the first 8 characters of
its id and ``>`` (roles.closed_name), which the pages write in their language. Accounts closed before
had the English text "Closed account 1a2B3c4D": this writes the mark where that name is kept, for the
accounts whose login marks them closed (``~`` and the id) and no other:

- ``users.name`` (and ``name_key``) where it is the English text;
- the players of finished matches' records (``matches.record``): a closed account's name there is its
  mark, whatever name the record kept (accounts closed before closing rewrote the records kept their
  display name there);
- the moderators' reasons (``fairplay_accounts.reasons``): a lopsided series against a closed account,
  kept as English text, becomes the keyed reason the detection writes now (``series``, with the other
  account's id), so the moderators' page writes it in its language.

Tournament standings, boards of the day, Play now and the queue read names from ``users`` as they are.

The audit log keeps the server's own notes by key too (``fairplay_audit.why``, JSON ``{"k", "p"}``, beside
the English ``note``; storage.fairplay.NOTES), for the moderators' page to write them in its language:
this adds the column and reads the keys and figures of the notes written before out of their English
text (a moderator's note has none).

Running it again changes nothing. The downgrade writes the English text back (a name another account
has taken meanwhile stays the mark) and drops ``why`` (the English notes are all there).

Revision ID: 0022
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0020"
branch_labels = None
depends_on = None

CLOSED_PREFIX = "~"
ENGLISH = "Closed account {id}"
MARK = "<closed:{id}>"
CHUNK = 400

# the detection's series reasons as English text, as patience.ladder.series_reason and
# patience.server.storage.fairplay.flag_series wrote them before reasons had keys (frozen here)
SERIES_QUITS = "{n} matches with one opponent in 24 h: the opponent made no real attempt in {quits}"
SERIES_WON = ("{n} matches with one opponent in 24 h: {won} won, {lost} lost ({excess:.1f} more wins than the "
              "ratings predict)")

users = sa.table("users", sa.column("id", sa.String), sa.column("login", sa.String), sa.column("name", sa.String),
                 sa.column("name_key", sa.String))
matches = sa.table("matches", sa.column("id", sa.String), sa.column("player_a", sa.String),
                   sa.column("player_b", sa.String), sa.column("record", sa.Text))
standings = sa.table("fairplay_accounts", sa.column("user_id", sa.String), sa.column("reasons", sa.Text))
audit = sa.table("fairplay_audit", sa.column("id", sa.Integer), sa.column("action", sa.String),
                 sa.column("note", sa.Text), sa.column("why", sa.Text))

# the server's notes in the audit log, as storage.fairplay wrote them before they had keys (frozen here)
NUMBER = r"[+-]?\d+\.\d"
OLD_NOTES = {
    "note_mark": re.compile(r"marked at once by the detection"),
    "note_flag": re.compile(r"flagged for review by the detection"),
    "note_flag_series": re.compile(r"flagged for review by the detection: (?P<series>.+)", re.S),
    "note_release": re.compile(rf"(?P<delta>{NUMBER}) held points of match (?P<match>\S+) applied"),
    "note_refund": re.compile(rf"(?P<points>{NUMBER}) points of match (?P<match>\S+) given back"),
    "note_unrefund": re.compile(rf"(?P<points>{NUMBER}) points of match (?P<match>\S+) taken back: the account "
                                r"that took them was cleared"),
}
NOTE_ACTIONS = {"mark": ("note_mark",), "flag": ("note_flag", "note_flag_series"), "release": ("note_release",),
                "refund": ("note_refund",), "unrefund": ("note_unrefund",)}  # the others: a moderator's text
ANY_SERIES = re.compile(
    r"(?P<n>\d+) matches with one opponent in 24 h: (?:the opponent made no real attempt in (?P<quits>\d+)|"
    r"(?P<won>\d+) won, (?P<lost>\d+) lost \((?P<excess>-?\d+\.\d) more wins than the ratings predict\)) "
    r"\((?P<name>.+), (?P<game>[a-z0-9_]+)\)", re.S)
CLOSED_NAMES = re.compile(r"Closed account (?P<id>[A-Za-z0-9_-]{1,24})|<closed:(?P<mark>[A-Za-z0-9_-]{1,24})>")


def _key(name: str) -> str:
    # as patience.server.storage.store.name_key, frozen here as this migration knew it
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def _closed(connection: sa.Connection) -> dict[str, str]:
    """The closed accounts: id -> name."""
    return dict(connection.execute(sa.select(users.c.id, users.c.name)
                                   .where(users.c.login.like(f"{CLOSED_PREFIX}%"))).all())


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start:start + CHUNK]


def _names(connection: sa.Connection, closed: dict[str, str], old: str, new: str) -> None:
    """``users.name`` of each closed account from its ``old`` form to its ``new`` one (a name another account's
    key has: left as it is)."""
    for user_id, name in closed.items():
        if name != old.format(id=user_id[:8]):
            continue
        name = new.format(id=user_id[:8])
        taken = connection.scalar(sa.select(users.c.id).where(users.c.name_key == _key(name), users.c.id != user_id))
        if taken is None:
            connection.execute(sa.update(users).where(users.c.id == user_id).values(name=name, name_key=_key(name)))


def _records(connection: sa.Connection, closed: dict[str, str], new: str, only: str | None) -> None:
    """Each closed account's name in the records of its finished matches: ``new`` (with ``only``: where it
    is that form)."""
    ids = sorted(closed)
    for chunk in _chunks(ids):
        rows = connection.execute(sa.select(matches.c.id, matches.c.record).where(
            sa.or_(matches.c.player_a.in_(chunk), matches.c.player_b.in_(chunk)), matches.c.record.is_not(None))).all()
        for match_id, text in rows:
            record = json.loads(text)
            changed = False
            for player in record.get("players", []):
                user_id = player.get("id")
                if user_id not in closed:
                    continue
                name = new.format(id=user_id[:8])
                if player.get("name") != name and (only is None or player.get("name") == only.format(id=user_id[:8])):
                    player["name"] = name
                    changed = True
            if changed:
                connection.execute(sa.update(matches).where(matches.c.id == match_id).values(record=json.dumps(record)))


def _reasons(connection: sa.Connection, change: Any) -> None:
    """Each account's reasons through ``change`` (a reason as stored -> it as it is to be, or None: as it is)."""
    for user_id, text in connection.execute(sa.select(standings.c.user_id, standings.c.reasons)).all():
        reasons = json.loads(text) if text else []
        if not isinstance(reasons, list):
            continue
        new = [change(r) for r in reasons]
        if any(n is not None for n in new):
            kept = [r if n is None else n for r, n in zip(reasons, new, strict=True)]
            connection.execute(sa.update(standings).where(standings.c.user_id == user_id)
                               .values(reasons=json.dumps(kept)))


def _closed_id(name: str, by_prefix: dict[str, list[str]]) -> tuple[str, str] | None:
    """The mark and the id of the closed account a name in an English text is, if it says which one."""
    found = CLOSED_NAMES.fullmatch(name)
    prefix = (found["id"] or found["mark"]) if found is not None else ""
    ids = by_prefix.get(prefix, [])
    return (MARK.format(id=prefix), ids[0]) if len(ids) == 1 else None


def _series(found: re.Match[str], name: str, user: str | None) -> dict[str, Any]:
    """A series reason by key, from its English text as matched by ANY_SERIES."""
    n = int(found["n"])
    why = ({"k": "series_quits", "p": {"n": n, "quits": int(found["quits"])}} if found["quits"] is not None else
           {"k": "series_won", "p": {"n": n, "won": int(found["won"]), "lost": int(found["lost"]),
                                     "excess": round(float(found["excess"]), 1)}})
    return {"k": "series", "p": {"why": why, "name": name, "game": found["game"], **({"user": user} if user else {})}}


def _notes(connection: sa.Connection, by_prefix: dict[str, list[str]]) -> None:
    """The key and figures of each note the server wrote in the audit log, read out of its English text."""
    for row_id, action, note in connection.execute(sa.select(audit.c.id, audit.c.action, audit.c.note).where(
            audit.c.action.in_(sorted(NOTE_ACTIONS)), audit.c.why.is_(None))).all():
        for key in NOTE_ACTIONS[action]:
            found = OLD_NOTES[key].fullmatch(note or "")
            if found is None:
                continue
            p: dict[str, Any] = {}
            for name, value in found.groupdict().items():
                p[name] = value if name in ("match", "series") else round(float(value), 1)
            if key == "note_flag_series":
                series = ANY_SERIES.fullmatch(p["series"])
                if series is not None:  # the other account by its id, if the name says which closed one it is
                    other = _closed_id(series["name"], by_prefix)
                    p["series"] = _series(series, *(other or (series["name"], None)))
            connection.execute(sa.update(audit).where(audit.c.id == row_id).values(why=json.dumps({"k": key, "p": p})))
            break


def upgrade() -> None:
    op.add_column("fairplay_audit", sa.Column("why", sa.Text(), nullable=True))
    connection = op.get_bind()
    closed = _closed(connection)
    by_prefix: dict[str, list[str]] = {}
    for user_id in closed:
        by_prefix.setdefault(user_id[:8], []).append(user_id)
    _notes(connection, by_prefix)
    if not closed:
        return
    _names(connection, closed, ENGLISH, MARK)
    _records(connection, closed, MARK, None)

    def keyed(reason: Any) -> dict[str, Any] | None:
        found = ANY_SERIES.fullmatch(reason) if isinstance(reason, str) else None
        other = _closed_id(found["name"], by_prefix) if found is not None else None
        return _series(found, *other) if found is not None and other is not None else None

    _reasons(connection, keyed)


def _english_why(why: Any) -> str | None:
    if isinstance(why, str):
        return why
    if isinstance(why, dict) and why.get("k") in ("series_quits", "series_won") and isinstance(why.get("p"), dict):
        try:
            return (SERIES_QUITS if why["k"] == "series_quits" else SERIES_WON).format(**why["p"])
        except (KeyError, ValueError, TypeError):
            return None
    return None


def downgrade() -> None:
    # ALTER TABLE … DROP COLUMN in place (SQLite ≥ 3.35 too): no copy of the table (see 0006)
    op.drop_column("fairplay_audit", "why")
    connection = op.get_bind()
    closed = _closed(connection)
    if not closed:
        return
    _names(connection, closed, MARK, ENGLISH)
    _records(connection, closed, ENGLISH, MARK)

    def english(reason: Any) -> str | None:
        if not isinstance(reason, dict) or reason.get("k") != "series" or not isinstance(reason.get("p"), dict):
            return None
        p = reason["p"]
        why = _english_why(p.get("why"))
        if p.get("user") not in closed or why is None:
            return None
        return f"{why} ({ENGLISH.format(id=str(p['user'])[:8])}, {p.get('game')})"

    _reasons(connection, english)
