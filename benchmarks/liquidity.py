"""Liquidity of the duel arena: how many seekers start a rated game, how soon, and how soon they have a result.

    python3 benchmarks/liquidity.py [--rates 10,30,100,300] [--hours 200] [--seed 1]

This is a **model**, not a run against a server: a discrete-event simulation in simulated seconds (no
sleeping) that pairs its seekers with the server's own rules, by calling the real functions
:func:`patience.duel.pairs` (a live pool's wave) and :func:`patience.duel.take_pending` (the waiting game a
Play-now player takes), over the arena's real pools (:data:`patience.server.arena.pools.FORMAT_KEYS`, waves
every :data:`~patience.server.arena.pools.WAVE_SECONDS`). Nothing of their logic is copied here.

The model. Seekers arrive as a Poisson stream of R an hour, each in one of the ten pools picked uniformly,
with a rating drawn from a normal around 1500 (sd 250, clamped to 800..2400); each one's own game lasts a
uniform 40..100 % of the pool's time limit. Every seeker is a different player and seeks once. Three
strategies are compared, each over the very same arrival stream (``--seed``):

- ``live``: wait in the pool up to 120 s; a pool of two or more is paired in waves on the 0.5 s grid
  (``pairs``); a seeker not paired by then leaves without a game.
  A live match's result comes when both games have ended.
- ``live+now``: the same, but a seeker still waiting after 30 s is offered Play now and takes it.
- ``now``: Play now at once, on arrival.

Play now: the player takes the first waiting game of the pool that ``take_pending`` lists (excluding
their own) and plays it as the challenger, or, if none is in reach, hosts a new waiting game. Both games of
such a match are then over when the later of the two ends: that is when host and challenger get their
result (the host's result comes with the challenger who took the game). A waiting game that nobody takes
within ``PENDING_DAYS`` expires (no result for the host).

Seekers are counted if they arrive within ``--hours``; arrivals go on for ``--tail-hours`` more (24) so that
games hosted near the end still meet their challengers. Per rate and strategy the table gives:

- ``started``: share of seekers who start a rated game (a Play-now host counts once their game starts);
- ``start p50/p95``: seconds from arrival to the start of their game (of those who started);
- ``result p50``: median seconds from arrival to the result, of those who started (no result counts as
  never);
- ``<=1h seek``/``<=1h game``: share of seekers, and of those who started, whose result came within an hour
  of their arrival;
- ``expired``: waiting games of the seekers counted that expired untaken; ``open``: those still untaken at
  the end of the run (their fate unknown: anything but 0 means ``--tail-hours`` is too short).

Targets (issue: Play now): every seeker starts a rated game within 2 s (with Play now); at 30 seekers an
hour at least 95 % of games have their result within an hour.
"""

from __future__ import annotations

import argparse
import enum
import heapq
import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from patience.duel import PENDING_DAYS, Format, Pending, Seeker, pairs, take_pending
from patience.server.arena.pools import FORMAT_KEYS, WAVE_SECONDS

LIVE_WAIT_S = 120.0
"""How long a seeker waits in a live pool before leaving (strategy ``live``)."""
OFFER_S = 30.0
"""After this long in a live pool a seeker is offered Play now (strategy ``live+now``)."""
RATING_MEAN, RATING_SD, RATING_MIN, RATING_MAX = 1500.0, 250.0, 800.0, 2400.0
PLAY_SHARE = (0.4, 1.0)
"""A game lasts this share of its pool's time limit (uniform)."""
HOUR = 3600.0
PENDING_S = PENDING_DAYS * 86400.0

POOL_LIMITS: tuple[int, ...] = tuple(Format.from_key(key).limit_s for key in FORMAT_KEYS)

# events at the same instant: a seek arrives first (the server pairs at once after a seek), then the
# waves, then the seekers whose wait ends
_ARRIVE, _WAVE, _DEADLINE = 0, 1, 2


class Strategy(enum.Enum):
    LIVE = "live"
    LIVE_THEN_NOW = "live+now"
    NOW = "now"


@dataclass(frozen=True)
class Arrival:
    """A seeker: their number, arrival time (s), pool (index into FORMAT_KEYS), rating, own game's length (s)."""

    n: int
    t: float
    pool: int
    rating: float
    play_s: float

    @property
    def user(self) -> str:
        return f"u{self.n}"


@dataclass
class Run:
    """What one simulation did: per seeker the start and result times (None: none), the seats taken
    (seeker, game id: ``L…`` for a live match, the waiting game's id for Play now), the waiting games
    that expired or were still open, and the broken invariants the simulation noticed (must be 0)."""

    strategy: Strategy
    rate: float
    hours: float
    arrivals: list[Arrival]
    start: list[float | None]
    result: list[float | None]
    seats: list[tuple[int, str]] = field(default_factory=list)
    taken: list[str] = field(default_factory=list)
    hosts: dict[str, int] = field(default_factory=dict)
    expired: list[str] = field(default_factory=list)
    open: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    def measured(self) -> list[int]:
        """The seekers counted: those who arrived within ``hours``."""
        return [a.n for a in self.arrivals if a.t < self.hours * HOUR]


def arrivals(rate_per_hour: float, hours: float, seed: int) -> list[Arrival]:
    """A Poisson stream of seekers over ``hours`` (simulated), the same for every strategy of one seed and rate."""
    rng = random.Random(f"liquidity/{seed}/{rate_per_hour:g}")
    out: list[Arrival] = []
    t = 0.0
    while True:
        t += rng.expovariate(rate_per_hour / HOUR)
        if t >= hours * HOUR:
            return out
        pool = rng.randrange(len(FORMAT_KEYS))
        rating = float(round(min(RATING_MAX, max(RATING_MIN, rng.gauss(RATING_MEAN, RATING_SD)))))
        play_s = rng.uniform(*PLAY_SHARE) * POOL_LIMITS[pool]
        out.append(Arrival(len(out), t, pool, rating, play_s))


def simulate(rate_per_hour: float, hours: float, strategy: Strategy, seed: int = 1,
             tail_hours: float = 24.0) -> Run:
    """Run one strategy over the seekers of ``arrivals(rate, hours + tail_hours, seed)``; see the module."""
    stream = arrivals(rate_per_hour, hours + tail_hours, seed)
    run = Run(strategy, rate_per_hour, hours, stream, [None] * len(stream), [None] * len(stream))
    pools = len(FORMAT_KEYS)
    waiting: list[dict[str, Seeker]] = [{} for _ in range(pools)]
    wave_at: list[float | None] = [None] * pools
    pending: list[list[Pending]] = [[] for _ in range(pools)]
    host_of = run.hosts  # waiting game id -> its host (seeker number)
    taken: set[str] = set()
    events: list[tuple[float, int, int, int]] = []  # (time, kind, seq, payload)
    seq = 0

    def push(t: float, kind: int, payload: int) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (t, kind, seq, payload))

    def seat(n: int, game: str, t: float) -> None:
        if run.start[n] is not None:
            run.violations.append(f"seeker {n} starts a second game {game}")
        run.start[n] = t
        run.seats.append((n, game))

    def expire(pool: int, now: float) -> None:
        keep = [p for p in pending[pool] if p.since > now - PENDING_S]
        run.expired.extend(p.id for p in pending[pool] if p.since <= now - PENDING_S)
        pending[pool] = keep

    def play_now(a: Arrival, now: float) -> None:
        expire(a.pool, now)
        for game in take_pending(a.rating, pending[a.pool], now, exclude={a.user}):
            if game.id in taken:  # a server would try the next one; here nobody races, so it is a bug
                run.violations.append(f"waiting game {game.id} offered after it was taken")
                continue
            host = host_of[game.id]
            if host == a.n:
                run.violations.append(f"seeker {a.n} takes their own game {game.id}")
                continue
            taken.add(game.id)
            run.taken.append(game.id)
            pending[a.pool].remove(game)
            seat(a.n, game.id, now)
            host_start = run.start[host]
            assert host_start is not None
            done = max(now + a.play_s, host_start + stream[host].play_s)
            run.result[a.n] = run.result[host] = done
            return
        game_id = f"P{a.n}"
        host_of[game_id] = a.n
        pending[a.pool].append(Pending(game_id, a.user, a.rating, now))
        seat(a.n, game_id, now)

    def schedule_wave(pool: int, now: float) -> None:
        if wave_at[pool] is None and len(waiting[pool]) >= 2:
            at = math.ceil(now / WAVE_SECONDS) * WAVE_SECONDS
            wave_at[pool] = at
            push(at, _WAVE, pool)

    def wave(pool: int, now: float) -> None:
        wave_at[pool] = None
        for first, second in pairs(list(waiting[pool].values()), now):
            if first.user == second.user or first.user not in waiting[pool] or second.user not in waiting[pool]:
                run.violations.append(f"bad pair {first.user}-{second.user} at {now}")
                continue
            del waiting[pool][first.user], waiting[pool][second.user]
            a, b = stream[int(first.user[1:])], stream[int(second.user[1:])]
            game_id = f"L{a.n}-{b.n}"
            seat(a.n, game_id, now)
            seat(b.n, game_id, now)
            run.result[a.n] = run.result[b.n] = now + max(a.play_s, b.play_s)
        if len(waiting[pool]) >= 2:
            wave_at[pool] = now + WAVE_SECONDS
            push(now + WAVE_SECONDS, _WAVE, pool)

    for a in stream:
        push(a.t, _ARRIVE, a.n)
    while events:
        now, kind, _, payload = heapq.heappop(events)
        if kind == _ARRIVE:
            a = stream[payload]
            if strategy is Strategy.NOW:
                play_now(a, now)
                continue
            waiting[a.pool][a.user] = Seeker(a.user, a.rating, now)
            push(now + (OFFER_S if strategy is Strategy.LIVE_THEN_NOW else LIVE_WAIT_S), _DEADLINE, a.n)
            schedule_wave(a.pool, now)
        elif kind == _WAVE:
            wave(payload, now)
        else:
            a = stream[payload]
            if waiting[a.pool].pop(a.user, None) is not None and strategy is Strategy.LIVE_THEN_NOW:
                play_now(a, now)
    end = stream[-1].t if stream else 0.0
    for pool in range(pools):
        expire(pool, end)
        run.open.extend(p.id for p in pending[pool])
    return run


@dataclass(frozen=True)
class Figures:
    rate: float
    strategy: Strategy
    seekers: int
    started: float
    start_p50: float
    start_p95: float
    result_p50: float
    hour_of_seekers: float
    hour_of_games: float
    expired: int
    open: int


def quantile(values: Sequence[float], q: float) -> float:
    """The nearest-rank quantile (inf in ``values`` counts as never; nan when empty)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def figures(run: Run) -> Figures:
    counted = run.measured()
    started = [n for n in counted if run.start[n] is not None]
    waits = [run.start[n] - run.arrivals[n].t for n in started]  # type: ignore[operator]
    results = [math.inf if run.result[n] is None else run.result[n] - run.arrivals[n].t  # type: ignore[operator]
               for n in started]
    within = sum(r <= HOUR for r in results)
    counted_set = set(counted)
    expired = sum(run.hosts[g] in counted_set for g in run.expired)
    still_open = sum(run.hosts[g] in counted_set for g in run.open)
    return Figures(run.rate, run.strategy, len(counted), len(started) / max(1, len(counted)), quantile(waits, 0.5),
                   quantile(waits, 0.95), quantile(results, 0.5), within / max(1, len(counted)),
                   within / max(1, len(started)), expired, still_open)


def _s(x: float) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "never"
    return f"{x:.0f}" if x >= 10 or x == 0 else f"{x:.1f}"


HEADER = (f"{'rate/h':>6}  {'strategy':<9} {'seekers':>7} {'started':>8} {'start p50':>9} {'start p95':>9} "
          f"{'result p50':>10} {'<=1h seek':>9} {'<=1h game':>9} {'expired':>7} {'open':>5}")


def row(f: Figures) -> str:
    return (f"{f.rate:>6g}  {f.strategy.value:<9} {f.seekers:>7} {f.started:>8.1%} {_s(f.start_p50):>9} "
            f"{_s(f.start_p95):>9} {_s(f.result_p50):>10} {f.hour_of_seekers:>9.1%} {f.hour_of_games:>9.1%} "
            f"{f.expired:>7} {f.open:>5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rates", default="10,30,100,300", help="seekers an hour, comma-separated")
    parser.add_argument("--hours", type=float, default=200.0, help="simulated hours of arrivals counted")
    parser.add_argument("--tail-hours", type=float, default=24.0, help="arrivals go on this long after, uncounted")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",") if r.strip()]
    began = time.perf_counter()
    print(f"Liquidity model (not a server run): Poisson seekers over the {len(FORMAT_KEYS)} pools, rating "
          f"N({RATING_MEAN:.0f}, {RATING_SD:.0f}) in {RATING_MIN:.0f}..{RATING_MAX:.0f}, games "
          f"{PLAY_SHARE[0]:.0%}..{PLAY_SHARE[1]:.0%} of the limit; the server's pairs() in waves every "
          f"{WAVE_SECONDS} s and take_pending(); live: wait {LIVE_WAIT_S:.0f} s; live+now: Play now offered at "
          f"{OFFER_S:.0f} s; now: Play now at once. {args.hours:g} simulated hours (+{args.tail_hours:g} h tail), "
          f"seed {args.seed}. Times in seconds from arrival.")
    print(HEADER)
    for rate in rates:
        for strategy in Strategy:
            run = simulate(rate, args.hours, strategy, args.seed, args.tail_hours)
            if run.violations:
                raise SystemExit(f"broken invariants: {run.violations[:5]}")
            print(row(figures(run)), flush=True)
    print(f"({time.perf_counter() - began:.1f} s)")


if __name__ == "__main__":
    main()
