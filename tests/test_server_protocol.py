"""The play protocol: every browser message is validated at the boundary, and answers encode as documented."""

from __future__ import annotations

import json

import pytest

from patience.server.explain import why
from patience.server.protocol import (
    CLIENT_MESSAGES,
    MAX_MESSAGE_BYTES,
    AcceptIntent,
    ChallengeLook,
    DeclineIntent,
    ErrorMsg,
    JoinIntent,
    MatchJoin,
    MoveIntent,
    NewIntent,
    Ping,
    ProtocolError,
    Rejected,
    RematchIntent,
    SeekIntent,
    StockIntent,
    WatchIntent,
    decode,
    encode,
)


def msg(t: str, d: object = None) -> str:
    return json.dumps({"t": t, "d": d} if d is not None else {"t": t})


def test_every_intent_reads_back() -> None:
    assert decode(msg("new", {"game": "teppich", "variant": "5x6", "seed": "42", "cid": "abc"})) == NewIntent(
        game="teppich", cid="abc", variant="5x6", seed="42")
    assert decode(msg("new", {"game": "faecher", "winnable": True})) == NewIntent(game="faecher", winnable=True)
    assert decode(msg("join", {"id": "abcdefgh12", "v": 7})) == JoinIntent(id="abcdefgh12", v=7)
    assert decode(msg("move", {"ack": 1, "src": "t6", "dst": "t1", "n": 3})) == MoveIntent(1, "t6", "t1", 3)
    assert decode(msg("move", {"ack": 2, "src": "w", "dst": "fh"})).n is None
    assert decode(msg("stock", {"ack": 5})) == StockIntent(5)
    assert decode(msg("ping")) == Ping()
    assert set(CLIENT_MESSAGES) == {"new", "join", "move", "stock", "undo", "giveup", "hint", "targets", "ping",
                                    "lobby", "seek", "unseek", "challenge", "accept", "match", "look", "rematch",
                                    "decline", "watch", "tour", "tjoin", "tpause"}


def test_duel_messages_read_back_and_refuse_bad_values() -> None:
    assert decode(msg("seek", {"format": "reloaded/standard/300"})) == SeekIntent("reloaded/standard/300")
    assert decode(msg("match", {"id": "abcdefgh12", "v": 3, "cid": "p1"})) == MatchJoin("abcdefgh12", "p1", 3)
    assert decode(msg("accept", {"code": "Zx_9-abcdEF"})) == AcceptIntent("Zx_9-abcdEF")
    assert decode(msg("look", {"code": "Zx_9-abcdEF"})) == ChallengeLook("Zx_9-abcdEF")
    assert decode(msg("rematch", {"id": "abcdefgh12"})) == RematchIntent("abcdefgh12")
    assert decode(msg("decline", {"id": "abcdefgh12"})) == DeclineIntent("abcdefgh12")
    assert decode(msg("watch", {"id": "abcdefgh12", "cid": "p1"})) == WatchIntent("abcdefgh12", "p1")
    for bad in [msg("look", {"code": "../etc"}), msg("watch", {"id": "x"}), msg("rematch", {}),
                msg("decline", {"id": "abcdefgh12", "by": 0}),
                msg("seek", {"format": "reloaded"}), msg("seek", {"format": "Reloaded/standard/300"}),
                msg("accept", {"code": "short"}), msg("match", {"id": "x"}),
                msg("seek", {"format": "reloaded/standard/300", "score": 9999})]:
        with pytest.raises(ProtocolError) as info:
            decode(bad)
        assert info.value.code == "bad_message", bad


def test_options_keep_their_types() -> None:
    intent = decode(msg("new", {"game": "teppich", "options": {"rows": 5, "waste": True, "fill_from": "stock"}}))
    assert intent.options == {"rows": 5, "waste": True, "fill_from": "stock"}


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("not json", "bad_message"),
        ("[1, 2]", "bad_message"),
        ('{"d": {}}', "bad_message"),
        ('{"t": "move", "d": {}, "x": 1}', "bad_message"),
        (msg("fly", {}), "unknown_type"),
        (msg("move", {"ack": 1, "src": "t1"}), "bad_message"),
        (msg("move", {"ack": -1, "src": "t1", "dst": "f"}), "bad_message"),
        (msg("move", {"ack": 1, "src": "t1", "dst": "f", "n": 0}), "bad_message"),
        (msg("move", {"ack": 1, "src": "t1", "dst": "f", "n": 53}), "bad_message"),
        (msg("move", {"ack": 1, "src": "T1; drop", "dst": "f"}), "bad_message"),
        (msg("move", {"ack": "1", "src": "t1", "dst": "f"}), "bad_message"),
        (msg("move", {"ack": 1, "src": "t1", "dst": "f", "extra": True}), "bad_message"),
        (msg("new", {"game": "teppich", "seed": "-3"}), "bad_message"),
        (msg("new", {"game": "teppich", "seed": 12}), "bad_message"),
        (msg("new", {"game": "teppich", "options": {f"k{i}": 1 for i in range(40)}}), "bad_message"),
        (msg("new", {"game": "x" * 41}), "bad_message"),
        (msg("new", {"game": "faecher", "winnable": "yes"}), "bad_message"),
        (msg("new", {"game": "faecher", "seed": "7", "winnable": True}), "bad_message"),
        (msg("join", {"id": "short"}), "bad_message"),
        (msg("join", {"id": "../../etc/passwd"}), "bad_message"),
    ],
)
def test_bad_messages_are_refused_with_a_code(raw: str, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode(raw)
    assert info.value.code == code
    assert str(info.value)


def test_oversized_messages_are_refused_unread() -> None:
    raw = msg("new", {"game": "teppich", "cid": "a" * 10}) + " " * MAX_MESSAGE_BYTES
    with pytest.raises(ProtocolError) as info:
        decode(raw)
    assert info.value.code == "too_large"


def test_server_messages_are_t_and_d() -> None:
    data = json.loads(encode(Rejected(3, "t1>t2", "no", None)))
    assert data == {"t": "rej", "d": {"ack": 3, "move": "t1>t2", "reason": "no", "why": None}}
    assert json.loads(encode(ErrorMsg("x", "y")))["d"] == {"code": "x", "msg": "y", "ack": None, "why": None}


def test_engine_sentences_get_translation_keys() -> None:
    assert why("7♣ cannot go on 8♣: colours must alternate").k == "alt_colour"  # type: ignore[union-attr]
    assert why("Q♥ onto a foundation (10 × 12)").p == {"card": "Q♥", "a": "10", "b": "12"}  # type: ignore[union-attr]
    illegal = why("illegal move v3>r2: 7♣ cannot go on 9♣: reserve piles build down by one rank")
    assert illegal is not None and illegal.k == "l_illegal"
    assert illegal.p["rk"] == "reserve_rank" and illegal.p["move"] == "v3>r2"
    assert why("something new") is None


def test_a_refused_intent_is_answered_with_its_ack_when_it_has_one() -> None:
    """A page resends an unanswered intent once; a refusal names the intent so the page drops it."""
    with pytest.raises(ProtocolError) as refused:
        decode(msg("move", {"ack": 3, "src": "t1", "dst": "t2", "auto": "yes"}))
    assert refused.value.code == "bad_message" and refused.value.ack == 3
    for data in ({"ack": "3", "src": 1}, {"ack": -1}, {"src": "t1"}, [1, 2]):
        with pytest.raises(ProtocolError) as refused:
            decode(msg("move", data))
        assert refused.value.ack is None
    with pytest.raises(ProtocolError) as refused:
        decode('{"t": "move", "d": {"ack": 4, "src": ')
    assert refused.value.ack is None
