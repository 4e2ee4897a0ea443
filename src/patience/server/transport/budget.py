"""What one socket, one address and one browser may ask of the server: token buckets and a cap on new games.

A page sends an intent a second or so; a script can send thousands. Each socket has a bucket of
its own and shares one with the other sockets of its address; a message waits for a token from
both before it is read further, so a flood slows the flooder (its frames wait in its own TCP
buffer) and never the others. A browser starts at most ``NEW_GAMES`` games a minute, and the
browsers of one address (a script gets a new browser id each time it leaves out the cookie) at most
``ADDRESS_NEW_GAMES`` a minute together, in bursts of ``ADDRESS_NEW_GAMES_BURST``.

An address's bucket outlives its sockets: a client that closes its socket and opens another gets
what its address had left, not a new burst (until the bucket is full again, when it is as good as a
new one and forgotten). An IPv6 client owns a /64 at least (a home or a phone gets one, often more),
so the addresses of one /64 are one address here, as at the door
(:mod:`patience.server.transport.door`) and in the sign-in limits
(:func:`patience.server.identity.address_group`).

>>> address_group("2001:db8:1:2:aaaa::7"), address_group("::ffff:203.0.113.7")
('2001:db8:1:2::/64', '203.0.113.7')

>>> bucket = TokenBucket(rate=2.0, burst=2, now=lambda: 0.0)
>>> [bucket.take() for _ in range(4)]
[0.0, 0.0, 0.5, 1.0]
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable

from patience.server.identity import address_group  # the unit every limit per address counts in

__all__ = ["ADDRESS_BURST", "ADDRESS_NEW_GAMES", "ADDRESS_NEW_GAMES_BURST", "ADDRESS_RATE", "IDLE_ADDRESSES",
           "NEW_GAMES", "SOCKET_BURST", "SOCKET_RATE", "Budgets", "TokenBucket", "address_group"]

SOCKET_RATE = 8.0  # messages a second one socket may send, on average (a quick player sends 1 or 2)
SOCKET_BURST = 40
# For all the sockets of one address together. Players behind one NAT (a home, an office, a school)
# share an address: 50 a second is 25 quick players at 2 intents a second each, and the burst lets a
# room full of pages open at once. One attacker's sockets share it too: 40 flooding sockets, each
# within its own 8 a second, get 50 a second between them instead of 320 (a tenth of what 500
# players send). A carrier-grade NAT with hundreds of players on one address would hit it.
ADDRESS_RATE = 50.0
ADDRESS_BURST = 250
NEW_GAMES = 30  # games a browser may start in NEW_GAMES_WINDOW seconds
NEW_GAMES_WINDOW = 60.0
# New games of all the browsers of one address: a game kept in memory for half an hour each, so one
# script with no cookie would otherwise start 5 a second. 60 a minute is two a minute for each of 30
# players behind one NAT; the burst lets a room of 30 pages start at once.
ADDRESS_NEW_GAMES = 60  # a minute
ADDRESS_NEW_GAMES_BURST = 60
MAX_WAIT = 10.0  # a socket that owes more than this many seconds of messages is closed
# Buckets of addresses with no socket open, kept until full again; past this many, the least recently
# used go first (some 200 bytes each: 20 MB at most)
IDLE_ADDRESSES = 100_000



class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` kept. :meth:`take` takes one, going into debt if
    need be, and says how long the taker must wait for it (0.0: at once)."""

    def __init__(self, rate: float, burst: int, now: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.now = now
        self.tokens = float(burst)
        self.at = now()

    def take(self) -> float:
        now = self.now()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate) - 1.0
        self.at = now
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def full(self) -> bool:
        return self.tokens + (self.now() - self.at) * self.rate >= self.burst

    def can_take(self) -> bool:
        """Is a token there to take at once (no debt)?"""
        return self.tokens + (self.now() - self.at) * self.rate >= 1.0


class Budgets:
    """The buckets of every address with a socket open here (and of those whose last socket closed
    lately, until full again), and the new games of every browser. Addresses are grouped by
    :func:`address_group`."""

    def __init__(self, socket_rate: float = SOCKET_RATE, socket_burst: int = SOCKET_BURST,
                 address_rate: float = ADDRESS_RATE, address_burst: int = ADDRESS_BURST,
                 new_games: int = NEW_GAMES, address_new_games: int = ADDRESS_NEW_GAMES,
                 address_new_games_burst: int = ADDRESS_NEW_GAMES_BURST,
                 idle_addresses: int = IDLE_ADDRESSES, now: Callable[[], float] = time.monotonic) -> None:
        self.socket_rate, self.socket_burst = socket_rate, socket_burst
        self.address_rate, self.address_burst = address_rate, address_burst
        self.new_games = new_games
        self.address_new_games, self.address_new_games_burst = address_new_games, address_new_games_burst
        self.now = now
        self._addresses: dict[str, tuple[TokenBucket, int]] = {}  # address -> its bucket, sockets open
        # addresses with no socket open -> their bucket (not full yet), least recently closed first
        self._idle: OrderedDict[str, TokenBucket] = OrderedDict()
        self.idle_addresses = idle_addresses
        self._games: dict[str, deque[float]] = {}  # browser -> the times of its new games in the window
        self._address_games: dict[str, TokenBucket] = {}  # address -> its bucket of new games (not full)
        self._pruned = now()

    def socket(self) -> TokenBucket:
        return TokenBucket(self.socket_rate, self.socket_burst, self.now)

    def opened(self, address: str) -> TokenBucket:
        """A socket of ``address`` opened: the bucket it shares with the other sockets of its address
        (what the address had left when its last socket closed, if that was lately)."""
        key = address_group(address)
        bucket, sockets = self._addresses.get(key) or (self._idle.pop(key) if key in self._idle else None, 0)
        if bucket is None:
            bucket = TokenBucket(self.address_rate, self.address_burst, self.now)
        self._addresses[key] = (bucket, sockets + 1)
        self._forget_idle()
        return bucket

    def closed(self, address: str) -> None:
        key = address_group(address)
        bucket, sockets = self._addresses[key]
        if sockets <= 1:
            del self._addresses[key]
            self._idle[key] = bucket  # kept until full again: a new socket starts from what is left
        else:
            self._addresses[key] = (bucket, sockets - 1)
        self._forget_idle()

    def _forget_idle(self) -> None:
        """Forget the buckets of addresses with no socket that are full again (as good as new ones),
        the longest idle first; past ``idle_addresses``, the least recently used whatever they hold."""
        idle = self._idle
        while idle:
            key, bucket = next(iter(idle.items()))
            if len(idle) <= self.idle_addresses and not bucket.full():
                return
            del idle[key]

    def new_game(self, browser: str, address: str = "?") -> str | None:
        """Count a new game of ``browser`` at ``address``: None when counted, else why not (and
        nothing counted)."""
        now = self.now()
        address = address_group(address)
        self._forget_idle()
        times = self._games.get(browser) or deque()
        while times and times[0] <= now - NEW_GAMES_WINDOW:
            times.popleft()
        if len(times) >= self.new_games:
            return f"at most {self.new_games} new games in {NEW_GAMES_WINDOW:g} s: wait a little"
        bucket = self._address_games.get(address)
        if bucket is None:
            bucket = TokenBucket(self.address_new_games / 60.0, self.address_new_games_burst, self.now)
        if not bucket.can_take():
            return f"at most {self.address_new_games} new games a minute from one address: wait a little"
        bucket.take()
        self._address_games[address] = bucket
        times.append(now)
        self._games[browser] = times
        if now - self._pruned > NEW_GAMES_WINDOW or len(self._games) + len(self._address_games) > 100_000:
            self._pruned = now  # forget the browsers with no game in the window: each comes back as new
            for key in [k for k, v in self._games.items() if not v or v[-1] <= now - NEW_GAMES_WINDOW]:
                del self._games[key]
            for key in [k for k, b in self._address_games.items() if b.full()]:  # as good as a new one
                del self._address_games[key]
        return None

    def __len__(self) -> int:
        """How many addresses and browsers the budgets remember (what they hold in memory)."""
        return len(self._addresses) + len(self._idle) + len(self._games) + len(self._address_games)
