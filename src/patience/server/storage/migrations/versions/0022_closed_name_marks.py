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
The audit log's notes stay English text as written. Running it again changes nothing. The downgrade
writes the English text back (a name another account has taken meanwhile stays the mark).

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
down_revision = "0017"
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
OLD_SERIES = re.compile(
    r"(?P<n>\d+) matches with one opponent in 24 h: (?:the opponent made no real attempt in (?P<quits>\d+)|"
    r"(?P<won>\d+) won, (?P<lost>\d+) lost \((?P<excess>-?\d+\.\d) more wins than the ratings predict\)) "
    r"\(Closed account (?P<id>[A-Za-z0-9_-]{1,24}), (?P<game>[a-z0-9_]+)\)")

users = sa.table("users", sa.column("id", sa.String), sa.column("login", sa.String), sa.column("name", sa.String),
                 sa.column("name_key", sa.String))
matches = sa.table("matches", sa.column("id", sa.String), sa.column("player_a", sa.String),
                   sa.column("player_b", sa.String), sa.column("record", sa.Text))
standings = sa.table("fairplay_accounts", sa.column("user_id", sa.String), sa.column("reasons", sa.Text))


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


def upgrade() -> None:
    connection = op.get_bind()
    closed = _closed(connection)
    if not closed:
        return
    _names(connection, closed, ENGLISH, MARK)
    _records(connection, closed, MARK, None)
    by_prefix: dict[str, list[str]] = {}
    for user_id in closed:
        by_prefix.setdefault(user_id[:8], []).append(user_id)

    def keyed(reason: Any) -> dict[str, Any] | None:
        found = OLD_SERIES.fullmatch(reason) if isinstance(reason, str) else None
        if found is None or len(by_prefix.get(found["id"], [])) != 1:
            return None
        n = int(found["n"])
        why = ({"k": "series_quits", "p": {"n": n, "quits": int(found["quits"])}} if found["quits"] is not None else
               {"k": "series_won", "p": {"n": n, "won": int(found["won"]), "lost": int(found["lost"]),
                                         "excess": round(float(found["excess"]), 1)}})
        return {"k": "series", "p": {"why": why, "name": MARK.format(id=found["id"]), "game": found["game"],
                                     "user": by_prefix[found["id"]][0]}}

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
