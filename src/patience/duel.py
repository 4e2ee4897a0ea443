"""Duels: two people play the same deal at the same time on one clock; the higher score wins.

This module is the match itself, without any network or database: the formats that may be
played as duels, the secret deal and its commitment that proves the deal was fixed in advance, a
:class:`Match` of two sessions on one clock, its result with the winner's bonus
(RULES.md §2, Match), the rating update and the pairing of waiting players::

    clock = ManualClock()
    match = Match("m1", Format("reloaded", None, 300), seed=new_deal_key(), clock=clock)
    match.act(0, "draw"); match.act(1, "giveup")
    clock.advance(300); match.tick()          # side 0 runs out of time
    match.result().winner                      # 0, 1 or None (a draw)
    match.result().outcomes                    # ("time_out", "given_up")
    verify_match(match.record())               # anyone can check the deal and replay both games

Every duel game has a ``time_limit`` option, which a format sets to the match's limit, so a game
that runs out of time ends as a time out (and its record replays to that end); and an undo limit of
:data:`DUEL_UNDO_LIMIT` (each move adds one undo, up to the limit; each undo uses one). Der Fächer's pool
drains until the match ends, when both games have (``pool_until=match``, RULES.md §3): ending early saves
nothing. Each game's record then keeps the match's end (``match_t``), so it replays to the same score.

A duel is dealt from a **deal key**: 256 random bits from :mod:`secrets`, which drive a keyed
BLAKE2b stream through the shuffle (:mod:`patience.rng`). Nobody can compute the deal without the
key, nor the key from the cards they see, so the face-down cards and the stock stay unknown to
both players until the end, and no public list of deals is ever used (winnable-only duels come
from the server's private stock of deal keys proved winnable).

The commitment is ``SHA-256("patience-duel-v2|GAME|OPTIONS|KEY")`` with OPTIONS the options
that differ from the defaults as compact JSON with sorted keys; it is shown when the match
starts, and the key when it ends. (Matches of the first version were dealt from a game number
and committed as ``patience-duel-v1|GAME|OPTIONS|SEED|NONCE``; their records still verify.)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from patience.errors import BadInputError, RecordError
from patience.games import get_game
from patience.options import options_to_dict
from patience.ratings import Rating, update
from patience.record import replay
from patience.rng import Seed, check_seed, is_deal_key, new_deal_key
from patience.scoring import match_result
from patience.session import Session

__all__ = [
    "AGAIN_AFTER_S",
    "DUEL_UNDO_LIMIT",
    "FORMATS",
    "LIMITS",
    "MATCH_FORMAT",
    "MATCH_VERSION",
    "PENDING_DAYS",
    "BonusRule",
    "Format",
    "Match",
    "MatchResult",
    "Pending",
    "Player",
    "Seeker",
    "closest",
    "commitment",
    "new_deal_key",
    "pairs",
    "pending_reach",
    "rate",
    "reach",
    "result_of",
    "take_pending",
    "verify_commitment",
    "verify_match",
]

MATCH_FORMAT = "patience-match"
MATCH_VERSION = 2
"""Version 2: dealt from a secret deal key. Version 1 (a game number and a nonce) still verifies."""
COMMIT_PREFIX = "patience-duel-v2"
COMMIT_PREFIX_V1 = "patience-duel-v1"

LIMITS = (300, 600)
"""Time limits a duel may have, in seconds (RULES.md §2: 5 minutes by default)."""

DUEL_UNDO_LIMIT = 3
"""Undos a duel keeps in store at most: each move adds one, each undo uses one (Solitaire Reloaded's
rule, RULES.md §2), or none. An unlimited
undo would let a player draw, look and take back to learn the stock, which the opponent does not."""

FORMATS: dict[str, dict[str, dict[str, Any]]] = {
    "reloaded": {"standard": {}},  # undo_limit=3 is the game's own rule
    # the game itself has no undo; the pool drains until the match ends (RULES.md §3, in a duel)
    "faecher": {"standard": {"pool_until": "match"},
                "with-undo": {"undo_limit": DUEL_UNDO_LIMIT, "pool_until": "match"}},
    # the base carpet's result does not depend on the play at all, so only the waste variants,
    # where the order of play decides which card fills a gap, can be duels; Teppich's own undo
    # has no limit
    "teppich": {"waste": {"waste": True, "undo_limit": DUEL_UNDO_LIMIT},
                "5x6-waste": {"rows": 5, "cols": 6, "waste": True, "undo_limit": DUEL_UNDO_LIMIT}},
}
"""What may be played as a duel: game id -> variant name -> its options."""


@dataclass(frozen=True)
class Format:
    """A kind of duel: the game, its variant (None: the first of :data:`FORMATS`) and the time limit."""

    game: str
    variant: str | None
    limit_s: int

    def __post_init__(self) -> None:
        variants = FORMATS.get(self.game)
        if variants is None:
            raise BadInputError(f"{self.game!r} is not played as a duel (duels: {', '.join(FORMATS)})")
        if self.variant is not None and self.variant not in variants:
            raise BadInputError(f"{self.game} duels have no variant {self.variant!r} (variants: {', '.join(variants)})")
        if self.limit_s not in LIMITS:
            raise BadInputError(f"a duel's time limit is one of {', '.join(map(str, LIMITS))} seconds")

    @property
    def key(self) -> str:
        """A short name of the format, e.g. ``reloaded/standard/300`` (lobby pools, URLs)."""
        return f"{self.game}/{self.variant_name}/{self.limit_s}"

    @property
    def variant_name(self) -> str:
        return self.variant or next(iter(FORMATS[self.game]))

    def options(self) -> dict[str, Any]:
        """The game options of this format (those not at their default), its time limit included:
        every duel game has a ``time_limit`` option, so its game ends by the rules at the match's limit."""
        opts = {**FORMATS[self.game][self.variant_name], "time_limit": self.limit_s}
        return options_to_dict(get_game(self.game).make_options(opts), only_changed=True)

    @classmethod
    def from_key(cls, key: str) -> Format:
        parts = key.split("/")
        if len(parts) != 3 or not parts[2].isdigit():
            raise BadInputError(f"a duel format is GAME/VARIANT/SECONDS, not {key!r}")
        return cls(get_game(parts[0]).INFO.id, parts[1], int(parts[2]))


@dataclass(frozen=True)
class BonusRule:
    """The match bonus for games whose options do not carry one (RULES.md §2 Decision: +10 %, at least 100)."""

    match_bonus_percent: int = 10
    match_bonus_min: int = 100


# -- the deal and its commitment -----------------------------------------------------------------


def _canonical(game: str, options: Mapping[str, Any], seed: Seed, nonce: str) -> bytes:
    opts = json.dumps(dict(options), sort_keys=True, separators=(",", ":"))
    if is_deal_key(seed):
        return f"{COMMIT_PREFIX}|{game}|{opts}|{seed}".encode()
    return f"{COMMIT_PREFIX_V1}|{game}|{opts}|{seed}|{nonce}".encode()


def commitment(game: str, options: Mapping[str, Any], seed: Seed, nonce: str = "") -> str:
    """The SHA-256 commitment (hex) to a deal: shown at the start, checked with the key at the end.

    >>> commitment("reloaded", {}, "ab" * 32)[:16]
    '42d5bc94a556e541'
    >>> commitment("reloaded", {}, 7, "ab")[:16]   # a first-version match: game number and nonce
    '43c116d670c1d04c'
    """
    return hashlib.sha256(_canonical(game, options, seed, nonce)).hexdigest()


def verify_commitment(digest: str, game: str, options: Mapping[str, Any], seed: Seed, nonce: str = "") -> bool:
    """Does ``digest`` commit to exactly this game, these options and this deal key (or seed and nonce)?"""
    return secrets.compare_digest(digest, commitment(game, options, seed, nonce))


# -- players, the match, the result --------------------------------------------------------------


@dataclass(frozen=True)
class Player:
    """A player of a match: the account id, the name shown and the rating at the start."""

    id: str
    name: str
    rating: Rating = field(default_factory=Rating)

    def to_dict(self) -> dict[str, Any]:
        r = self.rating
        return {"id": self.id, "name": self.name, "rating": round(r.rating, 1), "deviation": round(r.deviation, 1),
                "volatility": r.volatility, "provisional": r.provisional}


@dataclass(frozen=True)
class MatchResult:
    """Who won (0, 1 or None for a draw), the scores, the scores with the winner's bonus, the bonus,
    and how each game ended (``won``, ``no_moves``, ``time_out``, ``given_up``)."""

    winner: int | None
    scores: tuple[int, int]
    finals: tuple[int, int]
    bonus: int
    outcomes: tuple[str | None, str | None] = (None, None)

    def points(self, side: int) -> float:
        """The rating score of ``side``: 1 for a win, ½ for a draw, 0 for a loss."""
        return 0.5 if self.winner is None else float(self.winner == side)

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "scores": list(self.scores), "finals": list(self.finals), "bonus": self.bonus,
                "outcomes": list(self.outcomes)}


def result_of(scores: tuple[int, int], options: Any,
              outcomes: tuple[str | None, str | None] = (None, None)) -> MatchResult:
    """The match result of two final scores under the game's (or the default) bonus rule."""
    rule = options if hasattr(options, "match_bonus_percent") else BonusRule()
    winner, finals = match_result(scores, rule)
    bonus = 0 if winner is None else finals[winner] - scores[winner]
    return MatchResult(winner, scores, finals, bonus, outcomes)


def _outcomes(sessions: Sequence[Session]) -> tuple[str | None, str | None]:
    a, b = (s.outcome.value if s.outcome else None for s in sessions)
    return a, b


def rate(result: MatchResult, ratings: tuple[Rating, Rating]) -> tuple[Rating, Rating]:
    """Both players' ratings after the match (Glicko-2, the match as one rating period)."""
    a, b = ratings
    return update(a, [(b, result.points(0))]), update(b, [(a, result.points(1))])


class _SideClock:
    """A player's view of the match clock: it stops at the time limit, so a game never runs past it."""

    def __init__(self, clock: Callable[[], float], limit_s: int) -> None:
        self._clock = clock
        self._end = clock() + limit_s

    def __call__(self) -> float:
        return min(self._clock(), self._end)


class Match:
    """Two sessions of one deal on one clock. Side 0 and side 1 are the two players."""

    def __init__(self, match_id: str, fmt: Format, seed: Seed, nonce: str = "",
                 clock: Callable[[], float] = time.monotonic,
                 players: tuple[Player, Player] = (Player("a", "A"), Player("b", "B")), *, proved: bool = False,
                 clocks: tuple[Callable[[], float], Callable[[], float]] | None = None,
                 ) -> None:
        """``clocks``: a match played **apart** (each player at a time of their own, on a clock of
        their own, as Play now's same-deal matches are), instead of both on ``clock``. Der Fächer's
        pool is then counted at the time limit for both: ending early banks nothing, whatever the
        other player did or will do."""
        self.id = match_id
        self.format = fmt
        self.seed = check_seed(seed)
        self.nonce = "" if is_deal_key(self.seed) else nonce
        self.proved = proved  # the deal was proved winnable before the match
        self.options = fmt.options()
        self.commitment = commitment(fmt.game, self.options, seed, nonce)
        self.players = players
        self.limit_ms = fmt.limit_s * 1000
        self.apart = clocks is not None
        side_clocks = clocks if clocks is not None else (clock, clock)
        self.sessions = (Session(fmt.game, seed, self.options, clock=_SideClock(side_clocks[0], fmt.limit_s)),
                         Session(fmt.game, seed, self.options, clock=_SideClock(side_clocks[1], fmt.limit_s)))
        self.new_ratings: tuple[Rating, Rating] | None = None

    @property
    def game(self) -> str:
        return self.format.game

    @property
    def is_over(self) -> bool:
        return all(s.is_over for s in self.sessions)

    def act(self, side: int, action: str) -> None:
        """Carry out a player's action (a move text, ``undo``, ``giveup``) as :meth:`Session.apply_action`."""
        if action in ("hint", "solve"):
            raise BadInputError("hints are off in duels")
        try:
            self.sessions[side].apply_action(action)
        finally:  # a move refused because the time ran out may have ended the game, and so the match
            self._settle()

    def _settle(self) -> bool:
        """Once both games are over, add what waited for the end of the match (Der Fächer's pool, counted
        at the later game's end); True if that happened now."""
        waiting = [s for s in self.sessions if s.waits_for_match]
        if waiting and self.apart:  # each game's pool at the time limit, as soon as that game is over
            for session in waiting:
                session.settle(self.limit_ms)
            return True
        if not waiting or not self.is_over:
            return False
        end = max(s.end_ms or 0 for s in self.sessions)
        for session in waiting:
            session.settle(end)
        return True

    def tick(self) -> list[int]:
        """Bring both games up to the clock; returns the sides whose score or end changed.

        A game still going at the limit ends there as a time out, by its own ``time_limit`` option."""
        changed = []
        for side, session in enumerate(self.sessions):
            if session.is_over:
                continue
            before = len(session.ledger)
            session.tick()
            if session.is_over or len(session.ledger) != before:
                changed.append(side)
        if self._settle():
            changed = [0, 1]
        return changed

    def progress(self, side: int) -> dict[str, Any]:
        """What the other player may know of ``side``'s game: figures, never a card."""
        s = self.sessions[side]
        return {"score": s.score, "foundation_cards": s.state.foundation_cards(), "moves": s.moves_made,
                "ms": s.elapsed_ms(), "left_ms": max(0, self.limit_ms - s.elapsed_ms()),
                "outcome": s.outcome.value if s.outcome else None, "pool": self.pool(side)}

    def pool(self, side: int) -> int | None:
        """Der Fächer's pool of ``side`` while it is not in the score yet (None: no pool, or added)."""
        s = self.sessions[side]
        return s.pool_left() if s.outcome is None or s.waits_for_match else None

    def pools(self) -> tuple[int, int] | None:
        """What the pool added to each side's score at the end (None: the game has no pool)."""
        if self.sessions[0].pool_left() is None:
            return None
        a, b = (sum(e.applied for e in s.ledger if e.kind == "pool") for s in self.sessions)
        return a, b

    def result(self) -> MatchResult:
        """The result; only once both games are over."""
        if not self.is_over:
            raise BadInputError("the match is not over yet")
        a, b = self.sessions
        return result_of((a.score, b.score), a.options, _outcomes(self.sessions))

    def finish(self) -> tuple[MatchResult, tuple[Rating, Rating]]:
        """The result and both new ratings (kept for the record)."""
        result = self.result()
        self.new_ratings = rate(result, (self.players[0].rating, self.players[1].rating))
        return result, self.new_ratings

    def record(self) -> dict[str, Any]:
        """The match as a record: the commitment, both players, both game records and, once over,
        the deal key (the seed of both games) and the result. Each game record of a finished match
        replays with :func:`patience.record.replay`."""
        out: dict[str, Any] = {
            "format": MATCH_FORMAT, "version": MATCH_VERSION if is_deal_key(self.seed) else 1, "id": self.id,
            "game": self.game, "variant": self.format.variant_name, "limit_s": self.format.limit_s,
            "options": self.options, "commitment": self.commitment, "proved": self.proved,
            "players": [p.to_dict() for p in self.players], "games": [s.record() for s in self.sessions],
        }
        if self.apart:
            out["apart"] = True
        if not self.is_over:  # the deal stays secret until the end, even in the games' records
            for game in out["games"]:
                game.pop("seed", None)
        else:
            out["seed"] = self.seed
            out["nonce"] = self.nonce
            out["result"] = self.result().to_dict()
            if self.new_ratings is not None:
                out["ratings_after"] = [{"rating": round(r.rating, 1), "deviation": round(r.deviation, 1),
                                         "volatility": r.volatility} for r in self.new_ratings]
        return out


def verify_match(record: Mapping[str, Any]) -> MatchResult:
    """Check a finished match's record: the commitment opens to its seed, both games are that deal
    and replay exactly, and the result follows from their scores. Raises RecordError if not."""
    version = record.get("version")
    if record.get("format") != MATCH_FORMAT or version not in (1, MATCH_VERSION):
        raise RecordError(f"not a match record (format {MATCH_FORMAT!r}, version 1 or {MATCH_VERSION})")
    game, options, seed, nonce = record.get("game"), record.get("options"), record.get("seed"), record.get("nonce")
    if version == 1:  # a game number and a nonce
        if not isinstance(seed, int) or isinstance(seed, bool) or not isinstance(nonce, str):
            raise RecordError("the match record has no seed and nonce yet (is the match over?)")
    elif not is_deal_key(seed):
        raise RecordError("the match record has no deal key yet (is the match over?)")
    if not isinstance(options, Mapping):
        raise RecordError("the match record has no options")
    if not verify_commitment(str(record.get("commitment")), str(game), options, seed, str(nonce or "")):
        raise RecordError("the deal key does not open the commitment shown at the start")
    games = record.get("games")
    if not isinstance(games, list) or len(games) != 2:
        raise RecordError("a match record holds two game records")
    sessions = []
    for side, game_record in enumerate(games):
        if (not isinstance(game_record, Mapping) or game_record.get("game") != game
                or game_record.get("seed") != seed or dict(game_record.get("options") or {}) != dict(options)):
            raise RecordError(f"game {side + 1} is not the committed deal")
        session = replay(game_record)
        if session.outcome is None:
            raise RecordError(f"game {side + 1} has not ended")
        sessions.append(session)
    apart = record.get("apart", False)
    if not isinstance(apart, bool):
        raise RecordError("'apart' of a match record is true or false")
    limit_s = record.get("limit_s")
    if apart and (not isinstance(limit_s, int) or isinstance(limit_s, bool)):
        raise RecordError("a match played apart has its time limit in the record")
    # played at once: the pool counts until the later game's end; played apart: until the time limit
    end = int(limit_s) * 1000 if apart else max(s.end_ms or 0 for s in sessions)  # type: ignore[arg-type]
    for side, session in enumerate(sessions):
        if session.table.settles and session.match_end_ms != end:
            raise RecordError(f"game {side + 1}'s pool is not counted at the end of the match ({end} ms)")
    result = result_of((sessions[0].score, sessions[1].score), sessions[0].options, _outcomes(sessions))
    if "result" in record:
        expected = result.to_dict()
        if isinstance(record["result"], Mapping) and "outcomes" not in record["result"]:
            del expected["outcomes"]  # a record made before results told how each game ended
        if record["result"] != expected:
            raise RecordError(f"the result should be {expected}, the record says {record['result']}")
    return result


# -- pairing -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seeker:
    """A player waiting in a lobby pool: who, their rating in that game, since when (any clock)."""

    user: str
    rating: float
    since: float


REACH_START = 150.0
REACH_PER_SECOND = 25.0


def reach(waited_s: float) -> float:
    """How far in rating a waiting player may be paired: close at first, anyone after a minute or so."""
    return REACH_START + REACH_PER_SECOND * max(0.0, waited_s)


def closest(rating: float, waiting: Sequence[Seeker], *, exclude: str | None = None,
            now: float | None = None) -> Seeker | None:
    """The waiting player closest in rating (the one waiting longest among equals), or None.

    With ``now`` (on the clock of ``since``), only players whose :func:`reach` has grown to the
    difference count: a newcomer meets a near rating at once, a far one after some waiting.

    >>> closest(1500, [Seeker("a", 1700, 1), Seeker("b", 1450, 2), Seeker("c", 1550, 0)]).user
    'c'
    >>> closest(1500, [Seeker("a", 1900, 0)], now=9.0) is None, closest(1500, [Seeker("a", 1900, 0)], now=10.0)
    (True, Seeker(user='a', rating=1900, since=0))
    """
    best: Seeker | None = None
    for seeker in waiting:
        if seeker.user == exclude:
            continue
        if now is not None and abs(seeker.rating - rating) > reach(now - seeker.since):
            continue
        if best is None or (abs(seeker.rating - rating), seeker.since) < (abs(best.rating - rating), best.since):
            best = seeker
    return best


AGAIN_AFTER_S = 10.0
"""Two players who met last are paired again only once both have waited this long with nobody else in
reach (:func:`pairs`): a third player who comes meanwhile meets one of them."""


def pairs(waiting: Sequence[Seeker], now: float, last: Mapping[str, str] | None = None,
          ) -> list[tuple[Seeker, Seeker]]:
    """Pairs to make in one pool now, the whole pool at once (a wave): each player, longest waiting
    first, with the closest one left in rating (the one waiting longest among equals), if that one
    is within the first's :func:`reach` — the reach of the one who has waited longer, as when a
    newcomer's seek meets a player already waiting (:func:`closest`).

    ``last`` maps a player to the one they last met: two who met last are not paired again while
    anyone else in reach of either is left, and then only once both have waited :data:`AGAIN_AFTER_S`
    (a second pass over those the first left alone).

    About n log n: the players are grouped by rating, and the closest one left is always at the head
    of the nearest group left on either side (its longest waiting player), or next to it.

    >>> [(a.user, b.user) for a, b in pairs([Seeker("a", 1500, 0), Seeker("b", 2000, 1), Seeker("c", 1600, 2)], 3)]
    [('a', 'c')]
    >>> [(a.user, b.user) for a, b in pairs([Seeker("a", 1900, 0), Seeker("b", 1200, 0), Seeker("c", 1560, 10)], 10)]
    [('a', 'c')]
    >>> met = {"a": "b", "b": "a"}
    >>> [(x.user, y.user) for x, y in pairs([Seeker("a", 1500, 0), Seeker("b", 1500, 0), Seeker("c", 1600, 1)], 2, met)]
    [('a', 'c')]
    >>> pairs([Seeker("a", 1500, 0), Seeker("b", 1500, 0)], 5, met), len(pairs([Seeker("a", 1500, 0),
    ...                                                                        Seeker("b", 1500, 0)], 10, met))
    ([], 1)
    """
    if not last:
        return _pairs(waiting, now, {})
    made = _pairs(waiting, now, last)
    paired = {s.user for pair in made for s in pair}
    left = [s for s in waiting if s.user not in paired and now - s.since >= AGAIN_AFTER_S]
    return made + _pairs(left, now, {}) if len(left) > 1 else made


def _pairs(waiting: Sequence[Seeker], now: float, last: Mapping[str, str]) -> list[tuple[Seeker, Seeker]]:
    """:func:`pairs`' pass: never a player with the one ``last`` says they met last."""
    by_since = sorted(waiting, key=lambda s: s.since)
    ratings = sorted({s.rating for s in waiting})
    index = {rating: i for i, rating in enumerate(ratings)}
    groups: list[deque[Seeker]] = [deque() for _ in ratings]
    for seeker in by_since:
        groups[index[seeker.rating]].append(seeker)
    below = list(range(-1, len(ratings) - 1))  # the nearest group below that still has players
    above = list(range(1, len(ratings) + 1))

    def take(i: int, seeker: Seeker | None = None) -> Seeker:
        if seeker is None or groups[i][0] is seeker:
            seeker = groups[i].popleft()
        else:
            groups[i].remove(seeker)  # the second of its group (the first is the one not to meet again)
        if not groups[i]:  # an empty group is passed over from now on
            if below[i] >= 0:
                above[below[i]] = above[i]
            if above[i] < len(ratings):
                below[above[i]] = below[i]
        return seeker

    def eligible(g: int, step: list[int], avoid: str | None) -> tuple[int, Seeker] | None:
        """The first player of group ``g`` (or, past one who is only ``avoid``, the next group on)."""
        while 0 <= g < len(ratings):
            for seeker in itertools.islice(groups[g], 2):
                if seeker.user != avoid:
                    return g, seeker
            g = step[g]
        return None

    made = []
    for first in by_since:
        i = index[first.rating]
        if not groups[i] or groups[i][0] is not first:
            continue  # already paired
        take(i)
        avoid = last.get(first.user)
        found = [c for c in (eligible(i, below, avoid) if groups[i] else None,
                             eligible(below[i], below, avoid), eligible(above[i], above, avoid)) if c is not None]
        found = [(g, s) for g, s in found if avoid is None or last.get(s.user) != first.user]
        if not found:
            continue
        j, partner = min(found, key=lambda c: (abs(ratings[c[0]] - first.rating), c[1].since, ratings[c[0]]))
        if abs(ratings[j] - first.rating) > reach(now - first.since):
            continue
        made.append((first, take(j, partner)))
    return made


# -- Play now: same-deal matches played apart ----------------------------------------------------

PENDING_DAYS = 7
"""A same-deal game played apart waits this long for a challenger, then expires (no rating change)."""
PENDING_REACH_START = 600.0
PENDING_REACH_PER_HOUR = 1200.0


@dataclass(frozen=True)
class Pending:
    """A game of Play now waiting for a challenger: its id, its host, the host's rating in that game
    and when the host began it (seconds, any clock)."""

    id: str
    host: str
    rating: float
    since: float


def pending_reach(age_s: float) -> float:
    """How far in rating a waiting game may be taken: ±600 at first, ±1,800 after an hour. Wide on purpose:
    with few players a result matters more than a close rating (the rating update weighs the
    difference), and a host waits for the next seeker of the pool anyway (benchmarks/liquidity.py:
    at 30 seekers an hour over the ten pools, ±150 widening by 600 an hour gave 89 % of the results
    within an hour, this reach 96 %)."""
    return PENDING_REACH_START + PENDING_REACH_PER_HOUR * max(0.0, age_s) / 3600.0


def take_pending(rating: float, pending: Sequence[Pending], now: float, *,
                 exclude: frozenset[str] | set[str] = frozenset()) -> list[Pending]:
    """The waiting games a challenger of ``rating`` may take now, the one to try first first: those
    within their :func:`pending_reach`, younger than :data:`PENDING_DAYS`, whose host is not in
    ``exclude`` (the challenger, accounts of the same browser or address, the last opponent),
    closest in rating first, the oldest among equals. A server tries them in this order, each taken
    by one challenger at most (another may have taken the first a moment before).

    >>> [p.id for p in take_pending(1500, [Pending("a", "x", 2200, 0), Pending("b", "y", 1450, 10),
    ...                                    Pending("c", "z", 1480, 5)], now=20)]
    ['c', 'b']
    >>> [p.id for p in take_pending(1500, [Pending("a", "x", 2200, 0)], now=3600)]
    ['a']
    >>> take_pending(1500, [Pending("a", "me", 1500, 0)], now=1, exclude={"me"})
    []
    """
    oldest = now - PENDING_DAYS * 86400
    fit = [p for p in pending if p.host not in exclude and p.since > oldest
           and abs(p.rating - rating) <= pending_reach(now - p.since)]
    return sorted(fit, key=lambda p: (abs(p.rating - rating), p.since, p.id))
