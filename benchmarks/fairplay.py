"""Fair play's detection against populations of players (docs/fairplay.md), on the model level.

Two phases. The model phase feeds simulated games straight into the detection (``patience.fairplay``):
the think times and the hint agreement each kind of player produces, game after game, as the server's
analysis would record them. The server phase (``--server``, or ``--server-only``) plays live rated duels
through a real ``patience serve`` (SQLite, and the Redis of ``--redis-url`` so that this process may read
the database beside it): a full-speed hint bot against a simulated human, each player on a loopback
address of its own (127.x.y.z, as benchmarks/duels.py does), websocket clients sending the intents a page
sends (``how``, and for a drag ``ms`` and ``px``). The players know their deal (read from the server's
database: a cheater's engine would see the table; here the bot plays the project's simple hint on the
true state, the human the hint's move at 55 % and another useful move otherwise), and the table reports,
from the server's own answers (the moderators' API with a moderator account), the rated games each
played until flagged or marked.

Kinds (each game: 60 actions, 20 open decisions):

- ``hint-fast``: the hint at full speed (think 80-150 ms);
- ``hint-delayed``: the hint, with human-like heavy-tailed delays (log-normal, median 2 s, sigma 0.8);
- ``greedy-delayed``: a greedy move (the hint's in 65 % of open decisions), same delays;
- ``daily-scout``: a scouted daily line replayed at 100 ms a move;
- ``human``: log-normal think times (median 2 s, sigma 0.8, at least 350 ms), the hint's move with
  probability 0.55 (another useful move otherwise).

Per kind: rated games until flagged (score >= 50) or marked; for humans, the share flagged over 100 games.
``python benchmarks/fairplay.py [--players N] [--seed S] [--server] [--pairs N] [--rounds N]``
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from patience.fairplay import Step, account_score, game_figures

KINDS = ("hint-fast", "hint-delayed", "greedy-delayed", "daily-scout", "human")


def one_game(kind: str, rng: random.Random) -> object:
    if kind in ("hint-fast", "daily-scout"):
        thinks = [rng.randrange(80, 150) if kind == "hint-fast" else 100 for _ in range(60)]
    else:
        thinks = [max(350, int(rng.lognormvariate(7.6, 0.8))) for _ in range(60)]
    p = {"hint-fast": 0.98, "hint-delayed": 0.98, "greedy-delayed": 0.65, "daily-scout": 1.0, "human": 0.55}[kind]
    agreed = sum(rng.random() < p for _ in range(20))
    return game_figures([Step(i, t, "d") for i, t in enumerate(thinks)], 20, agreed)


def run(kind: str, rng: random.Random, games: int = 100) -> tuple[int | None, int | None]:
    """Games until flagged, until marked (None: not within ``games``)."""
    played: list[object] = []
    flagged = marked = None
    for n in range(1, games + 1):
        played.insert(0, one_game(kind, rng))
        score = account_score(played)  # type: ignore[arg-type]
        if score.state == "mark" and marked is None:
            marked = n
        if score.state in ("mark", "review") and flagged is None:
            flagged = n
        if marked is not None:
            break
    return flagged, marked


# -- the server phase: live rated duels through a real `patience serve` ----------------------------------

FORMAT = "reloaded/standard/300"
PASSWORD = "a long enough password"
HUMAN_ACTIONS = 30  # the simulated human gives up after this many actions (keeps a round under a minute)
BOT_ACTIONS = 150  # the bot gives up after this many (the simple hint may draw round the stock for ever)
ANALYSIS_S = 60.0  # how long to wait for the server's analysis of a round's games


def address_of(number: int) -> str:
    """The loopback address player ``number`` connects from (as benchmarks/duels.py: 127.1.1.1 and up)."""
    return f"127.{1 + number // 64516}.{1 + (number // 254) % 254}.{1 + number % 254}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Client:
    """One person: an account, an HTTP client and a websocket, all from a loopback address of its own."""

    def __init__(self, url: str, number: int, login: str) -> None:
        import httpx

        self.url, self.address, self.login = url, address_of(number), login
        self.http = httpx.Client(base_url=url, timeout=15.0,
                                 transport=httpx.HTTPTransport(local_address=self.address))
        answer = self.http.post("/account/signup", headers={"accept": "application/json"}, data={
            "csrf": self.csrf(), "login": login, "name": login.title(), "password": PASSWORD})
        answer.raise_for_status()
        self.id: str = answer.json()["user"]["id"]
        self.ws: Any = None
        self.ack = 0
        self.ended = False  # the match's end came (with whichever message)

    def csrf(self) -> str:
        return str(self.http.get("/api/me").json()["csrf"])

    def open(self) -> None:
        from websockets.sync.client import connect

        cookie = "; ".join(f"{k}={v}" for k, v in self.http.cookies.items())
        self.ws = connect(self.url.replace("http://", "ws://") + "/ws", additional_headers={"Cookie": cookie},
                          source_address=(self.address, 0), open_timeout=20, max_size=2**22, ping_interval=None,
                          max_queue=None)  # never stop reading (and answering pings) while a side waits
        self.ended = False

    def send(self, t: str, d: dict[str, Any]) -> None:
        self.ws.send(json.dumps({"t": t, "d": d}))

    def until(self, wanted: Any, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.login}: no wanted message in {timeout} s")
            try:
                msg: dict[str, Any] = json.loads(self.ws.recv(timeout=left))
            except TimeoutError:
                continue
            if msg["t"] == "dev" and msg["d"].get("end") is not None:
                self.ended = True
            if wanted(msg):
                return msg


def match_deal(database_url: str, match_id: str) -> tuple[str, str, dict[str, Any]]:
    from sqlalchemy import create_engine, select

    from patience.server.storage.store import MatchRow

    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            for _ in range(100):
                row = connection.execute(select(MatchRow.game, MatchRow.seed, MatchRow.options)
                                         .where(MatchRow.id == match_id)).first()
                if row is not None:
                    return row.game, row.seed, json.loads(row.options or "{}")
                time.sleep(0.1)
    finally:
        engine.dispose()
    raise RuntimeError(f"match {match_id} never reached the database")


def play_side(player: Client, kind: str, duel: dict[str, Any], database_url: str, rng: random.Random,
              tally: dict[str, int]) -> None:
    """Play one side of a live match as ``kind`` (hint-fast or human) until its game is over."""
    from patience.games import DRAW, REDEAL
    from patience.server.solo.hints import simple_hint
    from patience.session import Session

    game, seed, options = match_deal(database_url, duel["id"])
    session = Session(game, seed, options)
    time.sleep(duel.get("starts_in", 0) / 1000 + 0.05)
    actions = 0
    while not session.is_over:
        moves = session.state.useful_moves()
        best = simple_hint(session.state)
        if kind == "human" and best is not None and len(moves) > 1 and rng.random() >= 0.55:
            best = rng.choice([m for m in moves if m != best])
        if best is None or actions >= (HUMAN_ACTIONS if kind == "human" else BOT_ACTIONS):
            intent: dict[str, Any] = {"t": "giveup"}
        elif best in (DRAW, REDEAL):
            intent = {"t": "stock", "how": "click"}
        elif kind == "human":
            drag = int(rng.lognormvariate(6.2, 0.4))
            intent = {"t": "move", "src": best.src, "dst": best.dst, "n": best.n, "how": "drag", "ms": drag,
                      "px": int(rng.uniform(120, 600))}
        else:
            intent = {"t": "move", "src": best.src, "dst": best.dst, "n": best.n, "how": "click"}
        if kind == "human":
            time.sleep(max(0.35, rng.lognormvariate(7.3, 0.7) / 1000))  # median 1.5 s, heavy-tailed
        else:
            time.sleep(rng.uniform(0.08, 0.15))  # the full-speed bot: 80-150 ms a move
        player.ack += 1
        ack = player.ack
        t = intent.pop("t")
        player.send(t, {"ack": ack, **intent})
        answer = player.until(lambda m, ack=ack: m["t"] in ("dev", "rej", "err") and m["d"].get("ack") == ack)
        actions += 1
        tally[kind] = tally.get(kind, 0) + 1
        if t == "giveup":
            break
        if answer["t"] != "dev" or not answer["d"].get("ok", False):
            player.ack += 1
            player.send("giveup", {"ack": player.ack})  # out of step with the server: stop this game
            break
        session.play(best)


def one_match(players: tuple[Client, Client], kinds: tuple[str, str], database_url: str, rng: random.Random,
              tally: dict[str, int]) -> None:
    first, second = players
    for p in players:
        p.ended = False
    first.send("challenge", {"format": FORMAT, "cid": f"bench-{first.login}"})
    made = first.until(lambda m: m["t"] in ("challenge", "err"))
    if made["t"] == "err":
        raise RuntimeError(f"{first.login}: the challenge was refused: {made['d']}")
    code = made["d"]["code"]
    second.send("accept", {"code": code, "cid": f"bench-{second.login}"})
    duels = [p.until(lambda m: m["t"] == "duel")["d"] for p in players]
    sides = [threading.Thread(target=play_side, args=(p, kind, d, database_url, random.Random(rng.random()), tally))
             for p, kind, d in zip(players, kinds, duels, strict=True)]
    for thread in sides:
        thread.start()
    for thread in sides:
        thread.join()
    for p in players:
        if not p.ended:
            p.until(lambda m: m["t"] == "dev" and m["d"].get("end") is not None, timeout=90)
        p.ended = False


def standing(moderator: Client, account: Client, games: int) -> dict[str, Any]:
    """The account's standing as the moderators' API says it, once ``games`` of its games are analysed."""
    deadline = time.monotonic() + ANALYSIS_S
    while True:
        view = moderator.http.get(f"/api/mod/account/{account.id}").json()
        analysed = sum(g["verdict"] is not None for g in view["games"])
        if analysed >= games or view["state"] == "marked" or time.monotonic() > deadline:
            return view  # type: ignore[no-any-return]
        time.sleep(0.5)


def run_pair(url: str, database_url: str, moderator: Client, number: int, kinds: tuple[str, str], rounds: int,
             rng: random.Random, tally: dict[str, int]) -> list[dict[str, Any]]:
    """Matches between two players of ``kinds`` until one is marked (it is then refused the next) or
    ``rounds``; per player: its kind, when it was flagged and marked, and the moderators' view of it."""
    tag = rng.randrange(10**6)
    players = (Client(url, 10 + 2 * number, f"p{number}a{tag}"), Client(url, 11 + 2 * number, f"p{number}b{tag}"))
    for p in players:
        p.open()
    out = [{"kind": kind, "flagged": None, "marked": None, "view": None} for kind in kinds]
    try:
        for n in range(1, rounds + 1):
            try:
                one_match(players, kinds, database_url, rng, tally)
            except (RuntimeError, TimeoutError) as exc:
                for entry in out:
                    entry["error"] = str(exc)[:160]
                break
            for entry, account in zip(out, players, strict=True):
                view = standing(moderator, account, n)
                entry["view"] = view
                if view["state"] in ("review", "marked") and entry["flagged"] is None:
                    entry["flagged"] = n
                if view["state"] == "marked" and entry["marked"] is None:
                    entry["marked"] = n
            if any(entry["marked"] is not None for entry in out):
                break  # a marked account is refused the next challenge
    finally:
        for p in players:
            p.ws.close()
            p.http.close()
    return out


def server_phase(pairs: int, rounds: int, redis_url: str, seed: int) -> None:
    import redis

    from patience.server.storage.roles import grant
    from patience.server.storage.store import Store, sqlite_url

    rng = random.Random(seed)
    redis.Redis.from_url(redis_url).flushdb()  # this run's keys alone
    with tempfile.TemporaryDirectory() as folder:
        database_url = sqlite_url(Path(folder) / "bench.sqlite3")
        port = free_port()
        log = (Path(folder) / "serve.log").open("w")
        server = subprocess.Popen([sys.executable, "-m", "patience", "serve", "--port", str(port), "--database-url",
                                   database_url, "--redis-url", redis_url, "--deal-stock", "0"],
                                  stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            import httpx

            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).text == "ok":
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the server did not start: " + (Path(folder) / "serve.log").read_text())
                time.sleep(0.2)
            moderator = Client(url, 1, f"mod{rng.randrange(10**6)}")
            store = Store(database_url)
            grant(store, moderator.login, "moderator")
            store.close()
            tally: dict[str, int] = {}
            started = time.monotonic()
            matchups = [("hint-fast", "human")] * pairs + [("human", "human")]  # humans also against humans
            results: list[list[dict[str, Any]]] = [[] for _ in matchups]
            workers = [threading.Thread(target=lambda i=i, kinds=kinds: results.__setitem__(
                i, run_pair(url, database_url, moderator, i, kinds, rounds, random.Random(rng.random()), tally)))
                for i, kinds in enumerate(matchups)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            took = time.monotonic() - started
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
    print(f"\nserver phase: {pairs} bot-and-human pairs and a human pair, live rated duels {FORMAT} through "
          f"`patience serve` ({took:.0f} s, actions sent: {tally})")
    print(f"{'player':<10} {'games':>5} {'flagged at':>10} {'marked at':>9} {'score':>5}  "
          "verdicts (newest first) · reasons")
    for pair in results:
        for entry in pair:
            view = entry["view"]
            if entry.get("error"):
                print(f"{entry['kind']:<10} stopped: {entry['error']}")
            if not view:
                continue
            verdicts = ",".join(str(g["verdict"]) for g in view["games"])
            reasons = "; ".join(view["score"]["reasons"])[:90]
            flagged, marked = entry["flagged"] or "-", entry["marked"] or "-"
            print(f"{entry['kind']:<10} {len(view['games']):>5} {flagged!s:>10} {marked!s:>9} "
                  f"{view['score']['score']:>5}  {verdicts} · {reasons}")



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--server", action="store_true", help="then play live duels through a real patience serve")
    parser.add_argument("--server-only", action="store_true", help="the server phase alone")
    parser.add_argument("--pairs", type=int, default=3, help="server phase: bot-and-human pairs playing at once")
    parser.add_argument("--rounds", type=int, default=2, help="server phase: most matches a pair plays")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13",
                        help="server phase: a Redis database this run may empty")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    if args.server_only:
        server_phase(args.pairs, args.rounds, args.redis_url, args.seed)
        return
    print(f"{'kind':<16} {'players':>7} {'flagged':>8} {'marked':>7} {'games to flag (median)':>23}")
    for kind in KINDS:
        results = [run(kind, rng) for _ in range(args.players)]
        flagged = [f for f, _ in results if f is not None]
        marked = [m for _, m in results if m is not None]
        median = statistics.median(flagged) if flagged else "-"
        print(f"{kind:<16} {args.players:>7} {len(flagged) / args.players:>8.1%} {len(marked) / args.players:>7.1%} "
              f"{median!s:>23}")
    if args.server:
        server_phase(args.pairs, args.rounds, args.redis_url, args.seed)


if __name__ == "__main__":
    main()
