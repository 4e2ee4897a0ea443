"""The play protocol: every websocket message, one class per type, validated at the boundary.

A message is a small JSON object ``{"t": TYPE, "d": DATA}``. The browser sends intents
(``new``, ``join``, ``move``, ``stock``, ``undo``, ``giveup``, ``hint``, ``targets``, ``ping``;
for duels ``lobby``, ``seek``, ``unseek``, ``challenge``, ``look``, ``accept``, ``match``, ``rematch``,
``decline``, ``watch``; for tournaments ``tour``, ``tjoin``, ``tpause``);
the server, the only authority on the game, answers with the game (``game``), versioned events
(``ev``), rejections that changed nothing (``rej``), answers to questions (``hint``,
``targets``, ``pong``), errors (``err``), and for duels the lobby (``lobby``, ``challenge``,
``look``), a match (``duel``) and its versioned events (``dev``), rematch offers (``rematch``) and
a match as a spectator sees it (``watch``), and a tournament's standings (``tour``).
docs/protocol.md describes each field.

>>> decode(b'{"t": "move", "d": {"ack": 3, "src": "t6", "dst": "t1", "n": 2}}')
MoveIntent(ack=3, src='t6', dst='t1', n=2, auto=False, how=None, ms=None, px=None, v=None)
>>> encode(Pong(ms=5))
b'{"t":"pong","d":{"ms":5}}'
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import Meta, Struct

__all__ = [
    "CLIENT_MESSAGES", "DUEL_MESSAGES", "MAX_MESSAGE_BYTES", "AcceptIntent", "ChallengeIntent", "ChallengeLook",
    "ChallengeMsg", "Clock", "DeclineIntent", "DuelEvent", "DuelMsg", "DuelPlayer", "ErrorMsg", "EventMsg", "GameMsg",
    "GiveUpIntent", "HintAsk", "HintMsg", "JoinIntent", "Line", "LiveInfo", "LobbyAsk", "LobbyMsg", "LookMsg",
    "MatchEnd", "MatchJoin", "MoveIntent", "NewIntent", "Ping", "PlayNowMsg", "Pong", "Pool", "PoolInfo", "Progress",
    "ProtocolError", "RatingChange", "Rejected", "RematchIntent", "RematchMsg", "SeekIntent", "Status", "StockIntent",
    "Summary", "Table", "TargetsAsk", "TargetsMsg", "TourAsk", "TourDuel", "TourJoin", "TourLine", "TourMsg",
    "TourPause", "UndoIntent", "UnseekIntent", "WatchIntent", "WatchMsg", "Why", "decode",
    "encode", "refused_text",
]

MAX_MESSAGE_BYTES = 4096
"""Longer messages from a browser are refused unread (the longest real one is a few hundred bytes)."""

# -- field types -------------------------------------------------------------------------------

Ack = Annotated[int, Meta(ge=0, le=2**53)]
PileName = Annotated[str, Meta(pattern=r"^[a-z]{1,2}[0-9]{0,2}$")]
Count = Annotated[int, Meta(ge=1, le=52)]
GameId = Annotated[str, Meta(pattern=r"^[A-Za-z0-9_-]{8,40}$")]
ClientId = Annotated[str, Meta(pattern=r"^[A-Za-z0-9_-]{1,40}$")]
Seed = Annotated[str, Meta(pattern=r"^[0-9]{1,19}$")]
Word = Annotated[str, Meta(max_length=40)]
OptionValue = bool | int | Word
Options = Annotated[dict[Annotated[str, Meta(max_length=40)], OptionValue], Meta(max_length=32)]
How = Annotated[str, Meta(pattern=r"^(drag|click|key|dbl)$")]  # how the page says a move was made (docs/fairplay.md)
DragMs = Annotated[int, Meta(ge=0, le=600_000)]  # a drag's duration, ms
DragPx = Annotated[int, Meta(ge=0, le=100_000)]  # a drag's path length, CSS pixels
Version = Annotated[int, Meta(ge=0, le=2**53)]


class ProtocolError(ValueError):
    """A message that is not one of ours: ``code`` says which way (for the ``err`` reply)."""

    def __init__(self, code: str, message: str, ack: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.ack = ack  # the refused intent's ack, when one could be read: the page knows what was refused


_REFUSED = re.compile("[\x00\ud800-\udfff]")


def refused_text(value: object) -> bool:
    """Whether ``value`` (text, or lists, dicts and messages of it) holds a character no database keeps:
    NUL, or a lone surrogate (half of a UTF-16 pair, which no UTF-8 text encodes). Text from outside is
    checked for these once, where it comes in (the web's :mod:`patience.server.web.edge`, a socket's
    :func:`decode`), so that no query meets them.

    >>> refused_text("carl"), refused_text(["a", {"b": "c\\x00"}]), refused_text("\\ud800"), refused_text(3)
    (False, True, True, False)
    """
    if isinstance(value, str):
        return _REFUSED.search(value) is not None
    if isinstance(value, dict):
        return any(refused_text(k) or refused_text(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(refused_text(v) for v in value)
    if isinstance(value, Struct):
        return any(refused_text(getattr(value, name)) for name in value.__struct_fields__)
    return False


class _Msg(Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=False):
    T: ClassVar[str]


# -- from the browser ----------------------------------------------------------------------------


class NewIntent(_Msg, frozen=True):
    """Start a game: ``game`` id or name, a named ``variant``, ``options`` on top, and ``seed``, or
    ``winnable`` for a seed proved winnable (patience.solve.winnable), or else a random one."""

    T = "new"
    game: Word
    cid: ClientId = "-"
    variant: Word | None = None
    options: Options = {}
    seed: Seed | None = None
    winnable: bool = False

    def __post_init__(self) -> None:
        if self.winnable and self.seed is not None:
            raise ValueError("give a seed or ask for a winnable deal, not both")


class JoinIntent(_Msg, frozen=True):
    """(Re)attach to game ``id``; ``v`` is the last version seen (0: send the whole game)."""

    T = "join"
    id: GameId
    cid: ClientId = "-"
    v: Annotated[int, Meta(ge=0)] = 0


class MoveIntent(_Msg, frozen=True):
    """Move ``n`` cards (default: the server's choice, e.g. a whole fitting run) from ``src`` to ``dst``;
    with ``auto`` the server then sends the safe cards to the foundations, and finishes the game once
    every card is face up (patience.solve.auto), each as a move of its own. ``v`` (optional) is the
    version of the table the move was made on (the page's last): when another page of the game has
    moved cards since, the move is refused at no cost (reason "the table changed in another window…")."""

    T = "move"
    ack: Ack
    src: PileName
    dst: PileName
    n: Count | None = None
    auto: bool = False
    how: How | None = None  # fair play's evidence (optional; never trusted alone): drag, click, key, dbl
    ms: DragMs | None = None  # a drag's duration
    px: DragPx | None = None  # a drag's path length
    v: Version | None = None  # the version of the table the move was made on (None: not said, not checked)


class StockIntent(_Msg, frozen=True):
    """Turn the stock (talon): draw a card, or turn the waste over when the stock is empty (``auto`` and
    ``v``: as for a move)."""

    T = "stock"
    ack: Ack
    auto: bool = False
    how: How | None = None  # as for a move
    v: Version | None = None  # as for a move


class UndoIntent(_Msg, frozen=True):
    T = "undo"
    ack: Ack


class GiveUpIntent(_Msg, frozen=True):
    T = "giveup"
    ack: Ack


class HintAsk(_Msg, frozen=True):
    T = "hint"


class TargetsAsk(_Msg, frozen=True):
    """Where may the top ``n`` cards of ``src`` go now (games that show it)."""

    T = "targets"
    src: PileName
    n: Count | None = None


class Ping(_Msg, frozen=True):
    T = "ping"


# -- duels, from the browser (docs/protocol.md, Duels) ---------------------------------------------

FormatKey = Annotated[str, Meta(pattern=r"^[a-z]{1,16}/[a-z0-9-]{1,20}/[0-9]{1,5}$")]
ChallengeCode = Annotated[str, Meta(pattern=r"^[A-Za-z0-9_-]{8,24}$")]


class LobbyAsk(_Msg, frozen=True):
    """Show the lobby: the pools and how many wait in each; sent again whenever that changes."""

    T = "lobby"
    cid: ClientId = "-"


class SeekIntent(_Msg, frozen=True):
    """Wait in the pool of duel ``format`` (``GAME/VARIANT/SECONDS``) to be paired."""

    T = "seek"
    format: FormatKey
    cid: ClientId = "-"


class UnseekIntent(_Msg, frozen=True):
    T = "unseek"


class ChallengeIntent(_Msg, frozen=True):
    """Make a challenge link for a friend."""

    T = "challenge"
    format: FormatKey
    cid: ClientId = "-"


class AcceptIntent(_Msg, frozen=True):
    """Take up the challenge ``code``: the match starts at once."""

    T = "accept"
    code: ChallengeCode
    cid: ClientId = "-"


class MatchJoin(_Msg, frozen=True):
    """(Re)attach to match ``id``; ``v`` is the last version seen (0: send the whole match)."""

    T = "match"
    id: GameId
    cid: ClientId = "-"
    v: Annotated[int, Meta(ge=0)] = 0


class ChallengeLook(_Msg, frozen=True):
    """What is the challenge ``code``: who made it, which duel, is it still open (answered by ``look``)."""

    T = "look"
    code: ChallengeCode
    cid: ClientId = "-"


class RematchIntent(_Msg, frozen=True):
    """After the end of match ``id``: offer the opponent a rematch, or take up their offer."""

    T = "rematch"
    id: GameId
    cid: ClientId = "-"


class DeclineIntent(_Msg, frozen=True):
    """Decline the opponent's rematch offer of match ``id``, or take back one's own."""

    T = "decline"
    id: GameId
    cid: ClientId = "-"


class WatchIntent(_Msg, frozen=True):
    """Watch match ``id`` as a spectator: its figures, never a card."""

    T = "watch"
    id: GameId
    cid: ClientId = "-"


TournamentId = Annotated[str, Meta(pattern=r"^[A-Za-z0-9_-]{8,16}$")]


class TourAsk(_Msg, frozen=True):
    """Show tournament ``id``: its standings, sent again as results come in. A player who joined it is
    paired from this page (the ``duel`` of each pairing comes here)."""

    T = "tour"
    id: TournamentId
    cid: ClientId = "-"


class TourJoin(_Msg, frozen=True):
    """Join tournament ``id`` (with its ``password``, if it has one), or come back after a pause."""

    T = "tjoin"
    id: TournamentId
    password: Annotated[str, Meta(max_length=100)] = ""
    cid: ClientId = "-"


class TourPause(_Msg, frozen=True):
    """Leave the pairing of tournament ``id`` for now (a duel going on is played to its end)."""

    T = "tpause"
    id: TournamentId
    cid: ClientId = "-"


CLIENT_MESSAGES: dict[str, type[ClientMessage]] = {
    cls.T: cls for cls in (NewIntent, JoinIntent, MoveIntent, StockIntent, UndoIntent, GiveUpIntent,
                           HintAsk, TargetsAsk, Ping, LobbyAsk, SeekIntent, UnseekIntent, ChallengeIntent,
                           AcceptIntent, MatchJoin, ChallengeLook, RematchIntent, DeclineIntent, WatchIntent,
                           TourAsk, TourJoin, TourPause)
}

ClientMessage = (NewIntent | JoinIntent | MoveIntent | StockIntent | UndoIntent | GiveUpIntent | HintAsk
                 | TargetsAsk | Ping | LobbyAsk | SeekIntent | UnseekIntent | ChallengeIntent | AcceptIntent
                 | MatchJoin | ChallengeLook | RematchIntent | DeclineIntent | WatchIntent | TourAsk | TourJoin
                 | TourPause)
DUEL_MESSAGES = (LobbyAsk, SeekIntent, UnseekIntent, ChallengeIntent, AcceptIntent, MatchJoin, ChallengeLook,
                 RematchIntent, DeclineIntent, WatchIntent, TourAsk, TourJoin, TourPause)

# -- from the server -----------------------------------------------------------------------------


class Why(Struct, frozen=True):
    """A sentence's translation key and its parameters (the English text goes alongside)."""

    k: str
    p: dict[str, str] = {}


class Line(Struct, frozen=True):
    """One line of the score ledger (see patience.session.LedgerEntry), with its translation key."""

    t: int
    kind: str
    points: int
    applied: int
    total: int
    reason: str
    why: Why | None = None


class Clock(Struct, frozen=True):
    """Milliseconds played, the time limit (None: none) and whether the clock still runs."""

    ms: int
    limit: int | None
    running: bool


class Pool(Struct, frozen=True):
    """Der Fächer's pool: ``value`` at ``ms`` played, falling linearly to 0 at ``zero_ms`` (None: stays)."""

    value: int
    ms: int
    zero_ms: int | None


class Table(Struct, frozen=True):
    """What lies on the table: every pile bottom to top, a face-down card as null; the counters;
    and what a click on the stock does now (``draw``, ``redeal`` or null: nothing). ``legal``: the moves the
    rules allow in this position, each ``[src, dst, n]`` with ``dst`` the very pile (a card's own foundation
    named, as in ``targets``); never a stock turn (the card it turns up is unknown), never a hidden card: the
    page draws a listed move at once and the server's answer settles it."""

    piles: dict[str, list[str | None]]
    counters: dict[str, int]
    stock_action: str | None
    legal: list[tuple[str, str, int]] = []


class Status(Struct, frozen=True):
    score: int
    moves: int
    undos_left: int | None
    can_undo: bool
    outcome: str | None
    clock: Clock
    pool: Pool | None
    undos_most: int | None = None  # the most undos the store holds (None: no limit), for "Undo (1 of 3)"


class Summary(Struct, frozen=True):
    """The result of a finished game and its score by kind of ledger line."""

    outcome: str
    score: int
    moves: int
    ms: int
    foundation_cards: int
    breakdown: list[dict[str, Any]]


class GameMsg(_Msg, frozen=True):
    """The whole game as the player may see it: sent on ``new``, on ``join``, and to resync."""

    T = "game"
    id: str
    v: int
    game: str
    names: dict[str, str]
    variant: str | None
    seed: str
    options: dict[str, Any]
    changed: dict[str, Any]
    assist: bool
    table: Table
    status: Status
    ledger: list[Line]
    summary: Summary | None = None


class EventMsg(_Msg, frozen=True):
    """Version ``v`` of the game: what happened (``kind``: move, undo, illegal, giveup, tick) and
    the new state. ``ack`` names the intent it answers; ``table`` is null when no card moved;
    ``ledger`` holds the new ledger lines only."""

    T = "ev"
    v: int
    kind: str
    ack: int | None
    cid: str | None
    move: str | None
    ok: bool
    reason: str | None
    why: Why | None
    table: Table | None
    status: Status
    ledger: list[Line]
    summary: Summary | None = None


class Rejected(_Msg, frozen=True):
    """An intent the rules refused and that changed nothing (no version)."""

    T = "rej"
    ack: int
    move: str
    reason: str
    why: Why | None


class HintMsg(_Msg, frozen=True):
    """A legal, useful move now (``move`` null: none); ``dst`` names the very pile it goes to."""

    T = "hint"
    move: str | None
    src: str | None = None
    dst: str | None = None
    n: int | None = None


class TargetsMsg(_Msg, frozen=True):
    T = "targets"
    src: str
    n: int | None
    dsts: list[str]


class ErrorMsg(_Msg, frozen=True):
    """Input the server could not take: ``code`` for programs, ``msg`` for people (``why``: its
    translation key, where the browser has one)."""

    T = "err"
    code: str
    msg: str
    ack: int | None = None
    why: Why | None = None


class Pong(_Msg, frozen=True):
    """Answer to ping: milliseconds played in the current game (0 without one, or when another server
    process plays the page's match)."""

    T = "pong"
    ms: int


# -- duels, from the server ---------------------------------------------------------------------


class Progress(Struct, frozen=True):
    """What a player may know of the opponent's game: figures, never a card; ``pool``: Der Fächer's
    pool while it is not in the score yet (in a duel it drains until the match ends), else null."""

    score: int
    foundation_cards: int
    moves: int
    ms: int
    left_ms: int
    outcome: str | None
    pool: int | None = None


class DuelPlayer(Struct, frozen=True):
    """A player as others see them: the account id (for the profile), the name, the rating."""

    id: str
    name: str
    rating: int
    provisional: bool


class RatingChange(Struct, frozen=True):
    """One side's rating change as the ladder's rules applied it at a match's end (docs/fairplay.md, "What
    moves a rating"): ``applied`` (in the rating now), ``held`` (waiting for the moderators), ``reason``
    (``rated``, ``no_attempt``, ``no_attempt_opp``, ``quit``, ``linked``, ``capped``, ``new``, ``held``,
    ``marked``)."""

    applied: float
    held: float
    reason: str


class MatchEnd(Struct, frozen=True):
    """A finished match: ``winner`` (side 0 or 1, null: a draw), the scores, the scores with the
    bonus, the bonus; the deal key that opens the commitment (``seed``; a match of the first version
    had a game number and a ``nonce``); whether the deal was proved winnable before the match; both
    ratings after the match; how each game ended (``won``, ``no_moves``, ``time_out``, ``given_up``);
    ``pools``: what Der Fächer's pool added to each score when the match ended (null: no pool); ``changes``:
    each side's rating change as written with the result (null only in an end computed before that write,
    which no page is sent), ``ratings`` being the ratings at the start plus the ``applied`` changes."""

    winner: int | None
    scores: list[int]
    finals: list[int]
    bonus: int
    seed: str
    nonce: str
    ratings: list[DuelPlayer]
    outcomes: list[str | None]
    proved: bool = False
    pools: list[int] | None = None
    changes: list[RatingChange] | None = None


class DuelMsg(_Msg, frozen=True):
    """A whole match as player ``you`` (0 or 1) may see it: their own table, status and ledger,
    the opponent's progress, the commitment, and the end once both games are over."""

    T = "duel"
    id: str
    v: int
    you: int
    format: str
    game: str
    names: dict[str, str]
    variant: str
    limit_s: int
    options: dict[str, Any]
    commitment: str
    players: list[DuelPlayer]
    table: Table
    status: Status
    ledger: list[Line]
    opp: Progress
    summary: Summary | None = None
    end: MatchEnd | None = None
    starts_in: int = 0  # milliseconds until both clocks start (the countdown after "match found"); 0: started


class DuelEvent(_Msg, frozen=True):
    """Version ``v`` of a match for one player. ``kind`` is the player's own ``move``, ``undo``,
    ``illegal``, ``giveup``, the clock's ``tick``, or ``opp`` (the opponent acted: only ``opp``
    changes). ``table`` and ``ledger`` are the player's own; ``end`` comes with the last version."""

    T = "dev"
    v: int
    kind: str
    ack: int | None
    cid: str | None
    move: str | None
    ok: bool
    reason: str | None
    why: Why | None
    table: Table | None
    status: Status
    ledger: list[Line]
    opp: Progress
    summary: Summary | None = None
    end: MatchEnd | None = None


class PoolInfo(Struct, frozen=True):
    format: str
    game: str
    variant: str
    limit_s: int
    waiting: int
    players: list[DuelPlayer]


class LiveInfo(Struct, frozen=True):
    """A match going on, as the lobby lists it for spectators: its id, format and both players."""

    id: str
    format: str
    players: list[DuelPlayer]


class LobbyMsg(_Msg, frozen=True):
    """The lobby: every pool with how many wait (and who, the first few), the pool this player
    waits in, their match going on, how many matches are being played, the code of this player's
    open challenge, how many players are online, and the matches going on that one may watch."""

    T = "lobby"
    pools: list[PoolInfo] | msgspec.Raw  # Raw: the pools encoded once for every page that shows the lobby
    you: DuelPlayer | None
    seeking: str | None
    match: str | None
    playing: int
    challenge: str | None = None
    online: int = 0  # players with a duel page open, on every process of the arena
    live: list[LiveInfo] | msgspec.Raw = []  # the matches going on (the newest first, at most 20)


class ChallengeMsg(_Msg, frozen=True):
    """A challenge made: the link to pass on (``/duel?c=CODE``)."""

    T = "challenge"
    code: str
    format: str
    url: str


class LookMsg(_Msg, frozen=True):
    """What a challenge link is: ``state`` ``open`` (with who made it, ``by``, and the ``format``;
    ``away``: the maker has no lobby page open now), ``own`` (the asker made it), ``taken`` (a match
    was made of it), ``expired`` (older than an hour) or ``unknown``."""

    T = "look"
    code: str
    state: str
    by: DuelPlayer | None = None
    format: str | None = None
    away: bool = False


class RematchMsg(_Msg, frozen=True):
    """A rematch of finished match ``id``: side ``by`` ``offered`` one, ``withdrew`` their offer,
    ``declined`` the other's, or ``left`` (its page went: no rematch any more)."""

    T = "rematch"
    id: str
    state: str
    by: int


class PlayNowMsg(_Msg, frozen=True):
    """A match of Play now of this player came to its end: ``state`` ``done`` (the result is in: see
    ``/playnow``) or ``expired`` (nobody took it in time)."""

    T = "playnow"
    id: str
    state: str


class WatchMsg(_Msg, frozen=True):
    """A match as a spectator sees it, whole, at version ``v``: both players' figures (``sides``,
    as :class:`Progress`: never a card), the clocks' countdown, the commitment, and ``end`` once over."""

    T = "watch"
    id: str
    v: int
    format: str
    game: str
    variant: str
    limit_s: int
    commitment: str
    players: list[DuelPlayer]
    sides: list[Progress]
    starts_in: int = 0
    end: MatchEnd | None = None


class TourDuel(Struct, frozen=True):
    """A finished duel of a tournament player: the match (its replay: ``/match?id=``), the opponent's
    name, the result (``w``, ``d``, ``l``), the points it scored and whether they were doubled (a win
    on fire)."""

    match: str
    opponent: str
    result: str
    points: int
    double: bool = False


class TourLine(Struct, frozen=True):
    """A player's line of a tournament's standings: ``fire`` when their next win scores double,
    ``playing`` the duel they play now."""

    rank: int
    id: str
    name: str
    rating: int
    provisional: bool
    points: int
    fire: bool
    paused: bool
    playing: str | None
    duels: list[TourDuel]


class TourMsg(_Msg, frozen=True):
    """A tournament and its standings: ``state`` ``soon``, ``on`` or ``over``, with the milliseconds to
    its start and end and its length in ``minutes``; ``name`` empty for one the site schedules (the page
    names it by its game); ``locked`` when it has a password; ``by`` the name of the player who made it;
    for the asker: ``joined``, ``paused`` and the duel they play now (``playing``)."""

    T = "tour"
    id: str
    name: str
    format: str
    state: str
    starts_in: int
    ends_in: int
    minutes: int
    players: list[TourLine]
    scheduled: bool = False
    locked: bool = False
    by: str | None = None
    joined: bool = False
    paused: bool = False
    playing: str | None = None


# -- reading and writing -------------------------------------------------------------------------


class _Envelope(Struct, frozen=True, forbid_unknown_fields=True):
    t: Annotated[str, Meta(max_length=16)]
    d: msgspec.Raw = msgspec.Raw(b"{}")


class _AckOnly(Struct, frozen=True):
    ack: Ack | None = None


_NUL_IN_JSON = re.compile(rb"\x00|\\u0000")
_ENVELOPE = msgspec.json.Decoder(_Envelope)
_ACK_ONLY = msgspec.json.Decoder(_AckOnly)
_DECODERS = {name: msgspec.json.Decoder(cls) for name, cls in CLIENT_MESSAGES.items()}
_ENCODER = msgspec.json.Encoder()


def decode(raw: bytes | str) -> ClientMessage:
    """Read one message from the browser; raise ProtocolError if it is not a valid one."""
    if len(raw) > MAX_MESSAGE_BYTES:
        raise ProtocolError("too_large", f"a message is at most {MAX_MESSAGE_BYTES} bytes")
    try:
        envelope = _ENVELOPE.decode(raw)
    except msgspec.ValidationError as exc:
        raise ProtocolError("bad_message", f"a message is {{\"t\": type, \"d\": data}}: {exc}") from None
    except (msgspec.DecodeError, UnicodeDecodeError):
        raise ProtocolError("bad_message", "a message is a JSON object {\"t\": type, \"d\": data}") from None
    except RecursionError:
        raise ProtocolError("bad_message", "a message is nested too deeply") from None
    decoder = _DECODERS.get(envelope.t)
    if decoder is None:
        raise ProtocolError("unknown_type", f"no message type {envelope.t!r} (types: {', '.join(_DECODERS)})")
    try:
        intent = decoder.decode(envelope.d)
    except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError("bad_message", f"{envelope.t}: {exc}", _ack_of(envelope.d)) from None
    except RecursionError:
        raise ProtocolError("bad_message", f"{envelope.t}: nested too deeply") from None
    # JSON text holds a NUL as itself or as its escape (a lone surrogate's escape the decoder refuses)
    if _NUL_IN_JSON.search(bytes(envelope.d)) and refused_text(intent):
        raise ProtocolError("bad_text", f"{envelope.t}: text may not hold NUL or a lone surrogate",
                            _ack_of(envelope.d))
    return intent


def _ack_of(data: msgspec.Raw) -> int | None:
    """The ``ack`` of a message that is otherwise refused, if it has a valid one."""
    try:
        return _ACK_ONLY.decode(data).ack
    except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None


def encode(message: _Msg) -> bytes:
    """One message from the server as JSON bytes."""
    return _ENCODER.encode({"t": message.T, "d": message})
