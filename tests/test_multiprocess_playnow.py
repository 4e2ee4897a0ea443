"""Play now in an arena of two ``patience serve`` processes (PostgreSQL and Redis): a host plays on one
process, a challenger on the other gets the same deal, and once both games are over the match is rated
and written once, seen done on both processes; two challengers at one instant on both processes take one
waiting match once; a challenger whose process is killed with SIGKILL goes on through the other process
with every acknowledged move; and nothing read before the end tells the deal or the other player's score.

Each player has a loopback address of their own (127.0.x.y) and a browser of their own: the server
never deals a host's match to an account from the same address or browser."""

from __future__ import annotations

import copy
import json
import secrets
import threading
import time
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

import test_multiprocess
from arena_processes import Player, ServeProcess
from patience.duel import Format, verify_match
from patience.games.base import DRAW, REDEAL
from patience.server.storage.apart import ApartRow
from patience.server.storage.store import MatchRow, RatingHistoryRow, Store
from patience.session import ManualClock, Session

pytestmark = pytest.mark.slow

two, arena_redis = test_multiprocess.two, test_multiprocess.arena_redis  # the arena of two processes

FORMAT = "reloaded/standard/300"
COMPLETE_S = 25.0  # the end of a game completes the match; the sweep (every 10 s) catches what was missed


class Reader:
    """Everything a person received over HTTP, to look for leaks in afterwards."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def get(self, client: httpx.Client, path: str) -> httpx.Response:
        answer = client.get(path)
        self.texts.append(answer.text)
        return answer

    def play_now(self, player: Player) -> dict[str, Any]:
        token = player.http.get("/api/me").json()["csrf"]
        answer = player.http.post(f"/api/playnow/{FORMAT}", data={"csrf": token},
                                  headers={"accept": "application/json"})
        self.texts.append(answer.text)
        assert answer.status_code == 200, answer.text
        return answer.json()  # type: ignore[no-any-return]


def player(url: str, name: str, address: str) -> Player:
    return Player(url, f"{name}{secrets.token_hex(3)}", address=address)


def join_game(p: Player, game_id: str, within: float = 30.0) -> dict[str, Any]:
    """Show the solo game ``game_id`` on ``p``'s page: its snapshot. While another (dead) process still
    holds the game's lease, the join is answered ``server_error`` ("played elsewhere: reconnect"): the
    page tries again, as a page does."""
    deadline = time.monotonic() + within
    while True:
        p.send("join", {"id": game_id, "v": 0, "cid": p.cid})
        msg = p.until(lambda m: m["t"] in ("game", "err"), timeout=20)
        if msg["t"] == "game":
            return msg["d"]  # type: ignore[no-any-return]
        assert msg["d"]["code"] == "server_error" and time.monotonic() < deadline, msg
        time.sleep(0.5)


def act(p: Player, t: str, **d: Any) -> dict[str, Any]:
    """Send a solo intent and wait for its answer (an event, or an error)."""
    p.ack += 1
    ack = p.ack
    p.send(t, {"ack": ack, **d})
    return p.until(lambda m: m["t"] in ("ev", "err") and isinstance(m["d"], dict) and m["d"].get("ack") == ack)


def play_and_give_up(p: Player, game_id: str, draws: int) -> dict[str, Any]:
    """Join the game on ``p``'s page, draw ``draws`` times, give up: the first table's snapshot."""
    p.open()
    first = join_game(p, game_id)
    assert first["status"]["moves"] == 0
    for n in range(1, draws + 1):
        drawn = act(p, "stock")
        assert drawn["t"] == "ev" and drawn["d"]["status"]["moves"] == n, drawn
    end = act(p, "giveup")
    assert end["t"] == "ev" and end["d"]["status"]["outcome"] == "given_up", end
    p.close()
    return first


def entry(reader: Reader, p: Player, apart_id: str) -> dict[str, Any]:
    games = reader.get(p.http, "/api/playnow").json()["games"]
    return next(g for g in games if g["id"] == apart_id)  # type: ignore[no-any-return]


def wait_done(procs: tuple[ServeProcess, ...], players: list[Player], apart_id: str,
              reader: Reader | None = None) -> float:
    """Poll until every player sees the match done on every process: the seconds it took."""
    started = time.monotonic()
    for proc in procs:
        for p in players:
            p.move_to(proc.url)
            while True:
                shown = entry(reader or Reader(), p, apart_id)
                if shown["state"] == "done":
                    assert shown["result"] is not None and shown["theirs"] is not None, shown
                    break
                assert time.monotonic() - started < COMPLETE_S, (proc.name, shown)
                time.sleep(0.25)
    return time.monotonic() - started


def check_written_once(postgres_url: str, procs: tuple[ServeProcess, ...], players: list[Player],
                       apart_id: str) -> dict[str, Any]:
    """The match is over on every process that runs, played apart, its record verified; each player has
    one rated match; one row of ``matches`` and one rating_history row per player for it."""
    record: dict[str, Any] = {}
    for proc in procs:
        shown = httpx.get(f"{proc.url}/api/matches/{apart_id}", timeout=10).json()
        assert shown["state"] == "over" and shown["record"]["apart"] is True, shown
        verify_match(shown["record"])
        record = shown["record"]
        for p in players:
            profile = httpx.get(f"{proc.url}/api/profile/{p.user_id}", timeout=10).json()
            assert profile["ratings"]["reloaded"]["matches"] == 1, (proc.name, p.login, profile)
    store = Store(postgres_url)
    try:
        with store.engine.connect() as connection:
            assert connection.scalar(select(func.count()).select_from(MatchRow).where(MatchRow.id == apart_id)) == 1
            history = connection.execute(select(RatingHistoryRow.user_id).where(
                RatingHistoryRow.match_id == apart_id)).scalars().all()
            assert sorted(history) == sorted(p.user_id for p in players)
            assert connection.scalar(select(ApartRow.state).where(ApartRow.id == apart_id)) == "done"
    finally:
        store.close()
    return record


def deal_of(postgres_url: str, apart_id: str) -> str:
    store = Store(postgres_url)
    try:
        with store.engine.connect() as connection:
            return str(connection.scalar(select(ApartRow.deal).where(ApartRow.id == apart_id)))
    finally:
        store.close()


def test_a_host_on_one_process_and_a_challenger_on_the_other_play_one_deal_rated_once(
        two: tuple[ServeProcess, ServeProcess], postgres_url: str) -> None:
    one, other = two
    reader = Reader()
    host = player(one.url, "hana", "127.0.21.1")
    hosted = reader.play_now(host)
    assert hosted["role"] == "host" and hosted["opponent"] is None
    host_first = play_and_give_up(host, hosted["game_id"], draws=4)
    assert host_first["seed"] == f"now:{hosted['id']}"

    challenger = player(other.url, "cleo", "127.0.21.2")
    taken = reader.play_now(challenger)
    assert taken["role"] == "challenger" and taken["id"] == hosted["id"]
    assert taken["commitment"] == hosted["commitment"]
    assert taken["opponent"]["id"] == host.user_id
    mine = entry(reader, challenger, hosted["id"])
    assert mine["state"] == "taken" and mine["theirs"] is None and mine["result"] is None and "seed" not in mine
    challenger_first = play_and_give_up(challenger, taken["game_id"], draws=2)
    assert challenger_first["table"] == host_first["table"]  # one deal, the same first table
    ended = time.monotonic()

    took = wait_done((one, other), [host, challenger], hosted["id"])
    record = check_written_once(postgres_url, (one, other), [host, challenger], hosted["id"])
    assert [sum(1 for a in g["actions"] if a["m"] != "giveup") for g in record["games"]] == [4, 2]
    print(f"play now: the match was done on both processes {time.monotonic() - ended:.2f} s after the "
          f"challenger gave up (polling {took:.2f} s)")


def test_two_challengers_at_one_instant_on_both_processes_take_one_match_once(
        two: tuple[ServeProcess, ServeProcess], postgres_url: str) -> None:
    one, other = two
    reader = Reader()
    host = player(one.url, "hugo", "127.0.22.1")
    hosted = reader.play_now(host)
    assert hosted["role"] == "host"
    play_and_give_up(host, hosted["game_id"], draws=1)
    takers = [player(one.url, "tina", "127.0.22.2"), player(other.url, "theo", "127.0.22.3")]
    barrier = threading.Barrier(len(takers))
    answers: dict[str, dict[str, Any]] = {}

    def press(p: Player) -> None:
        token = p.http.get("/api/me").json()["csrf"]
        barrier.wait()  # each one's csrf token first, so that both posts leave at the same instant
        answer = p.http.post(f"/api/playnow/{FORMAT}", data={"csrf": token}, headers={"accept": "application/json"})
        answers[p.login] = {"status": answer.status_code, **answer.json()}

    threads = [threading.Thread(target=press, args=(p,)) for p in takers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(a["status"] for a in answers.values()) == [200, 200], answers
    roles = sorted((a["role"], a["id"] == hosted["id"]) for a in answers.values())
    assert roles == [("challenger", True), ("host", False)], answers
    store = Store(postgres_url)
    try:
        with store.engine.connect() as connection:
            rows = connection.execute(select(ApartRow.id, ApartRow.state, ApartRow.host_id, ApartRow.challenger_id)
                                      ).all()
    finally:
        store.close()
    by_id = {r.id: r for r in rows}
    assert len(rows) == 2 and by_id[hosted["id"]].state == "taken"
    winner = next(p for p in takers if answers[p.login]["role"] == "challenger")
    loser = next(p for p in takers if p is not winner)
    assert by_id[hosted["id"]].challenger_id == winner.user_id
    (new,) = [r for r in rows if r.id != hosted["id"]]
    assert (new.state, new.host_id, new.challenger_id) == ("open", loser.user_id, None)


def test_a_challenger_whose_process_is_killed_goes_on_elsewhere_with_every_acknowledged_move(
        two: tuple[ServeProcess, ServeProcess], postgres_url: str) -> None:
    one, other = two
    host = player(one.url, "ivo", "127.0.23.1")
    hosted = Reader().play_now(host)
    play_and_give_up(host, hosted["game_id"], draws=3)

    challenger = player(other.url, "jana", "127.0.23.2")
    taken = Reader().play_now(challenger)
    assert taken["role"] == "challenger" and taken["id"] == hosted["id"]
    challenger.open()
    assert join_game(challenger, taken["game_id"])["status"]["moves"] == 0
    acknowledged = 0
    for _ in range(5):
        drawn = act(challenger, "stock")
        assert drawn["t"] == "ev", drawn
        acknowledged += 1
        assert drawn["d"]["status"]["moves"] == acknowledged
    killed_at = time.monotonic()
    other.kill()  # SIGKILL: its lease of the game lapses by itself
    challenger.close()
    challenger.move_to(one.url)
    challenger.open()
    again = join_game(challenger, taken["game_id"], within=30)
    back_s = time.monotonic() - killed_at
    assert again["status"]["moves"] == acknowledged and again["status"]["outcome"] is None
    drawn = act(challenger, "stock")
    assert drawn["t"] == "ev" and drawn["d"]["status"]["moves"] == acknowledged + 1, drawn
    end = act(challenger, "giveup")
    assert end["t"] == "ev" and end["d"]["status"]["outcome"] == "given_up", end
    challenger.close()

    wait_done((one,), [host, challenger], hosted["id"])
    record = check_written_once(postgres_url, (one,), [host, challenger], hosted["id"])
    challenger_actions = record["games"][1]["actions"]
    assert sum(1 for a in challenger_actions if a["m"] != "giveup") == acknowledged + 1
    print(f"play now: the challenger's game was joined on the surviving process {back_s:.2f} s after kill -9")


def play_for_points(p: Player, key: str, steps: int = 40) -> int:
    """Play the deal ``key`` on ``p``'s page for points (what a player would: a move that scores when
    there is one, else the stock), following it on a copy of the game here: the score the server gave."""
    mirror = Session("reloaded", key, Format.from_key(FORMAT).options(), clock=ManualClock())
    score = 0
    for _ in range(steps):
        legal = mirror.state.legal_moves()
        best = None
        for move in legal:
            if move in (DRAW, REDEAL):
                continue
            trial = copy.deepcopy(mirror)
            trial.play(move)
            if trial.score > mirror.score:
                best = move
                break
        if best is None:
            stock = [m for m in legal if m in (DRAW, REDEAL)]
            if not stock:
                break
            mirror.play(stock[0])
            answer = act(p, "stock")
        else:
            mirror.play(best)
            answer = act(p, "move", src=best.src, dst=best.dst, n=best.n)
        assert answer["t"] == "ev", answer
        score = int(answer["d"]["status"]["score"])
    return score


def walk(value: Any) -> Any:
    """Every dict inside a JSON value."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def test_nothing_read_before_the_end_on_either_process_tells_the_deal_or_the_other_score(
        two: tuple[ServeProcess, ServeProcess], postgres_url: str) -> None:
    one, other = two
    host_reads, challenger_reads, visitor_reads = Reader(), Reader(), Reader()
    host = player(one.url, "kai", "127.0.24.1")
    hosted = host_reads.play_now(host)
    key = deal_of(postgres_url, hosted["id"])
    assert key and key != "None"
    host.open()
    join_game(host, hosted["game_id"])
    # at a script's speed: fewer actions than a machine-speed verdict needs (20), so that the analysis of the
    # host's game does not mark the host, which would void the match (docs/protocol.md, "A mark closes Play now")
    play_for_points(host, key, steps=15)
    host_score = act(host, "giveup")["d"]["status"]["score"]
    host.close()

    challenger = player(other.url, "lina", "127.0.24.2")
    taken = challenger_reads.play_now(challenger)
    assert taken["role"] == "challenger" and taken["id"] == hosted["id"]
    challenger.open()
    first = join_game(challenger, taken["game_id"])
    assert first["status"]["moves"] == 0
    for _ in range(3):
        own_score = act(challenger, "stock")["d"]["status"]["score"]
    assert own_score != host_score, "the host played for points: a score of their own to look for"

    visitor_one = httpx.Client(base_url=one.url, timeout=10, transport=httpx.HTTPTransport(local_address="127.0.24.3"))
    visitor_other = httpx.Client(base_url=other.url, timeout=10,
                                 transport=httpx.HTTPTransport(local_address="127.0.24.3"))
    for proc in (one, other):  # what each of them reads on each process while the match goes on
        for p, reads in ((host, host_reads), (challenger, challenger_reads)):
            client = httpx.Client(base_url=proc.url, cookies=p.http.cookies, timeout=10,
                                  transport=httpx.HTTPTransport(local_address=p.address or "127.0.0.1"))
            shown = next(g for g in reads.get(client, "/api/playnow").json()["games"] if g["id"] == hosted["id"])
            assert shown["state"] == "taken" and shown["theirs"] is None and shown["result"] is None, shown
            assert "seed" not in shown
            reads.get(client, "/api/matches")
            reads.get(client, f"/api/matches/{hosted['id']}")
            reads.get(client, f"/api/profile/{host.user_id}")
            reads.get(client, f"/api/profile/{challenger.user_id}")
            client.close()
        for visitor in (visitor_one, visitor_other):
            visitor_reads.get(visitor, "/api/matches")
            visitor_reads.get(visitor, f"/api/matches/{hosted['id']}")
            visitor_reads.get(visitor, f"/api/profile/{host.user_id}")
            visitor_reads.get(visitor, "/api/playnow")

    end = act(challenger, "giveup")
    assert end["t"] == "ev"
    challenger.close()
    ws_challenger = [json.dumps(m) for m in challenger.got]
    ws_host = [json.dumps(m) for m in host.got]
    everything = host_reads.texts + challenger_reads.texts + visitor_reads.texts + ws_challenger + ws_host
    for text in everything:
        assert key not in text, text[:400]
    # the host's score and game are nowhere in what the challenger or a visitor read before the end
    for text in challenger_reads.texts + visitor_reads.texts + ws_challenger:
        assert hosted["game_id"] not in text, text[:400]
        for d in walk(json.loads(text)):
            assert d.get("theirs") is None and d.get("result") is None, d
            assert d.get("score") != host_score, d
    # and the challenger's own messages are about their own game alone
    for m in challenger.got:
        if m["t"] == "game":
            assert m["d"]["id"] == taken["game_id"], m
    print(f"play now leak check: {len(everything)} bodies and messages read; the host's score was {host_score}")

    wait_done((one, other), [host, challenger], hosted["id"])
    check_written_once(postgres_url, (one, other), [host, challenger], hosted["id"])
    visitor_one.close()
    visitor_other.close()


def test_a_hosts_match_is_never_dealt_to_an_account_of_the_same_address_or_browser_on_the_other_process(
        two: tuple[ServeProcess, ServeProcess]) -> None:
    one, other = two
    reader = Reader()
    host = player(one.url, "mara", "127.0.25.1")
    hosted = reader.play_now(host)
    play_and_give_up(host, hosted["game_id"], draws=1)
    longer = "reloaded/standard/600"
    token = host.http.get("/api/me").json()["csrf"]
    hosted_longer = host.http.post(f"/api/playnow/{longer}", data={"csrf": token},
                                   headers={"accept": "application/json"}).json()
    assert hosted_longer["role"] == "host"
    play_and_give_up(host, hosted_longer["game_id"], draws=1)

    neighbour = player(other.url, "nils", "127.0.25.1")  # another browser at the host's address
    theirs = reader.play_now(neighbour)
    assert theirs["role"] == "host" and theirs["id"] != hosted["id"], theirs

    # another account signed up in the host's browser, at another address, on the other process
    kin = httpx.Client(base_url=other.url, cookies=host.http.cookies, timeout=10,
                       transport=httpx.HTTPTransport(local_address="127.0.25.9"))
    form = {"csrf": kin.get("/api/me").json()["csrf"]}
    assert kin.post("/account/signout", data=form, headers={"accept": "application/json"}).status_code == 200
    form = {"csrf": kin.get("/api/me").json()["csrf"], "login": f"kin{secrets.token_hex(3)}", "name": "Kin",
            "password": "correct horse battery"}
    assert kin.post("/account/signup", data=form, headers={"accept": "application/json"}).status_code == 200
    form = {"csrf": kin.get("/api/me").json()["csrf"]}
    kins = kin.post(f"/api/playnow/{longer}", data=form, headers={"accept": "application/json"}).json()
    assert kins["role"] == "host" and kins["id"] != hosted_longer["id"], kins
    kin.close()

    stranger = player(other.url, "otto", "127.0.25.20")  # anyone else may take the host's match
    taken = reader.play_now(stranger)
    assert taken["role"] == "challenger" and taken["id"] in (hosted["id"], theirs["id"]), taken
