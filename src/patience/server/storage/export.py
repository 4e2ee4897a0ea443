"""An account's data as one JSON document (the account page's "export my data").

What the account holds: the account itself (never its password hash nor its sessions' tokens), its
sessions (browser and times), the names it had, its solo games with their records, its matches with
their records (live ones without what is still secret), its ratings, their history and each match's
rating change with its reason (the ledger), the deals of the day it played and the tournaments it
joined (never a tournament's password). A secret deal key
(the deal of a match of Play now, or of a deal of the day) is left out of the solo games' records:
it is shown on the match's and the day's pages once it is public.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from patience.rng import is_deal_key
from patience.server.storage.daily import AttemptRow
from patience.server.storage.ladder import RatingChangeRow
from patience.server.storage.store import (
    AuthSessionRow,
    GameMoveRow,
    GameRow,
    MatchRow,
    RatingHistoryRow,
    RatingRow,
    UserBrowserRow,
    UserNameRow,
    UserRow,
    now_ms,
)
from patience.server.storage.tournaments import TournamentPlayerRow, TournamentRow

__all__ = ["EXPORT_FORMAT", "export_account"]

EXPORT_FORMAT = "patience-arena-account"


def _game(row: GameRow, later: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    record = json.loads(row.record)
    actions = record.setdefault("actions", [])
    known = len(actions)
    actions.extend(action for seq, action in later if seq >= known)  # those not yet in the record
    secret = is_deal_key(record.get("seed")) or is_deal_key(row.seed)
    if secret:
        record.pop("seed", None)
    return {"id": row.id, "game": row.game, "variant": row.variant, "seed": None if secret else row.seed,
            "outcome": row.outcome, "score": row.score, "moves": row.moves, "ms": row.ms, "hints": row.hints,
            "created_ms": row.created_ms, "ended_ms": row.ended_ms, "record": record}


def _match(row: MatchRow, names: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row.id, "game": row.game, "variant": row.variant, "limit_s": row.limit_s, "state": row.state,
        "apart": bool(row.apart), "created_ms": row.created_ms, "ended_ms": row.ended_ms,
        "players": [{"id": p, "name": names.get(p, "?")} for p in (row.player_a, row.player_b)],
        "commitment": row.commitment, "winner": row.winner, "scores": [row.score_a, row.score_b],
        "finals": [row.final_a, row.final_b], "outcomes": [row.outcome_a, row.outcome_b],
    }
    if row.state == "over" and row.record is not None:  # the whole record, public once the match is over
        out["record"] = json.loads(row.record)
    return out


def export_account(engine: Engine, user_id: str) -> dict[str, Any] | None:
    """Everything of the account ``user_id`` (see the module's text), or None if there is no such account."""
    with Session(engine) as db:
        user = db.get(UserRow, user_id)
        if user is None:
            return None
        browsers = list(db.scalars(select(UserBrowserRow.browser_id).where(UserBrowserRow.user_id == user_id)))
        games = list(db.scalars(select(GameRow).where(GameRow.browser_id.in_(browsers))
                                .order_by(GameRow.created_ms, GameRow.id))) if browsers else []
        later: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        if games:
            for game_id, seq, action in db.execute(select(GameMoveRow.game_id, GameMoveRow.seq, GameMoveRow.action)
                                              .where(GameMoveRow.game_id.in_([g.id for g in games]))
                                              .order_by(GameMoveRow.game_id, GameMoveRow.seq)):
                later.setdefault(game_id, []).append((seq, json.loads(action)))
        matches = list(db.scalars(select(MatchRow).where(or_(MatchRow.player_a == user_id,
                                                              MatchRow.player_b == user_id))
                                  .order_by(MatchRow.created_ms, MatchRow.id)))
        ids = {p for m in matches for p in (m.player_a, m.player_b)}
        names = dict(db.execute(select(UserRow.id, UserRow.name).where(UserRow.id.in_(ids))).all()) if ids else {}
        out: dict[str, Any] = {
            "format": EXPORT_FORMAT, "version": 1, "exported_ms": now_ms(),
            "account": {"id": user.id, "login": user.login, "name": user.name, "email": user.email,
                        "created_ms": user.created_ms},
            "former_names": [{"name": name, "until_ms": until} for name, until in db.execute(
                select(UserNameRow.name, UserNameRow.until_ms).where(UserNameRow.user_id == user_id)
                .order_by(UserNameRow.until_ms))],
            "sessions": [{"browser": s.browser, "created_ms": s.created_ms, "seen_ms": s.seen_ms,
                          "expires_ms": s.expires_ms} for s in db.scalars(
                select(AuthSessionRow).where(AuthSessionRow.user_id == user_id).order_by(AuthSessionRow.created_ms))],
            "browsers": len(browsers),
            "games": [_game(g, later.get(g.id, [])) for g in games],
            "matches": [_match(m, names) for m in matches],
            "ratings": [{"game": r.game, "rating": r.rating, "deviation": r.deviation, "volatility": r.volatility,
                         "matches": r.matches, "updated_ms": r.updated_ms} for r in db.scalars(
                select(RatingRow).where(RatingRow.user_id == user_id).order_by(RatingRow.game))],
            "rating_history": [{"game": h.game, "match_id": h.match_id, "rating": h.rating,
                                "deviation": h.deviation, "at_ms": h.at_ms} for h in db.scalars(
                select(RatingHistoryRow).where(RatingHistoryRow.user_id == user_id).order_by(RatingHistoryRow.id))],
            "rating_changes": [{"match_id": c.match_id, "game": c.game, "opponent_id": c.opponent_id,
                                "proposed": c.proposed, "applied": c.applied, "held": c.held, "state": c.state,
                                "reason": c.reason, "at_ms": c.at_ms} for c in db.scalars(
                select(RatingChangeRow).where(RatingChangeRow.user_id == user_id).order_by(RatingChangeRow.at_ms))],
            "daily": [{"day": a.day, "game": a.game, "game_id": a.game_id, "started_ms": a.started_ms,
                       "practice": bool(a.practice)}
                      for a in db.scalars(select(AttemptRow).where(AttemptRow.user_id == user_id)
                                          .order_by(AttemptRow.day, AttemptRow.game))],
            "tournaments": [{"id": t.id, "name": t.name, "format": t.format, "starts_ms": t.starts_ms,
                             "ends_ms": t.ends_ms, "joined_ms": p.joined_ms, "made_by_me": t.created_by == user_id}
                            for p, t in db.execute(
                select(TournamentPlayerRow, TournamentRow)
                .join(TournamentRow, TournamentRow.id == TournamentPlayerRow.tournament_id)
                .where(TournamentPlayerRow.user_id == user_id).order_by(TournamentPlayerRow.joined_ms))],
        }
    return out
