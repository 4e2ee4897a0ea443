"""The matches this process owns: made here, played here, logged before told, taken over here.

A match is played by the process that holds its lease (``match:ID``, renewed every second with
the leases of all its matches in one command). Each version is first a row of its move log
(:mod:`patience.server.arena.matches`), committed before anyone is told, so whatever a player
was told survives a crash. When a process stops renewing (it died), another takes the lease,
rebuilds the match from its log and goes on; the time between the last logged moment and the
takeover does not count on either clock. Processes that died are found from the hash ``nodes``
(:class:`patience.server.arena.nodes.Nodes`): the per-second work of a process grows with its own
matches and the number of processes, not with every match of the arena.

The clock of every match owned here runs on its own (:meth:`OwnedMatches.tick`): it waits for
nothing but its own commit — not for pairing, tournaments or any other I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import anyio

from patience.duel import Format, Match, Player
from patience.errors import PatienceError
from patience.rng import check_seed
from patience.server.arena.dealstock import DealStock
from patience.server.arena.matches import Intent, LiveMatch, MatchClock
from patience.server.arena.nodes import Matched, Nodes, Outbound
from patience.server.arena.pools import MET_KEEP_SECONDS, Side, remember_met
from patience.server.bus import Bus
from patience.server.live import Connection, Now, Peer
from patience.server.protocol import ErrorMsg, GiveUpIntent, encode
from patience.server.solo.fairplay import FairPlay
from patience.server.storage.ladder import player_lock
from patience.server.storage.league import (
    MoveRow,
    finish_match,
    insert_match,
    live_match_ids,
    parse_rating,
    saved_matches,
)
from patience.server.storage.store import Store
from patience.server.storage.writer import GroupWriter

__all__ = ["LEASE_SECONDS", "OVER_KEEP_SECONDS", "OwnedMatches", "Pages", "encode_error", "list_live", "rebuild"]

log = logging.getLogger("patience.server")

LEASE_SECONDS = 5.0  # a match whose owner stops renewing for this long is taken over
FENCE_MARGIN_SECONDS = 1.5  # an owner stops playing this long before its leases could have lapsed
OVER_KEEP_SECONDS = 120.0  # a finished match stays in memory this long for late reconnects


def _finish(live: LiveMatch, result: Any, ratings: Any, connection: Any) -> None:
    """Write a match's end (:func:`finish_match`, in the batch's transaction) and keep what the ladder applied."""
    live.rated = finish_match(connection, live.match, result, ratings)


def encode_error(code: str, message: str) -> bytes:
    return encode(ErrorMsg(code, message, None))


def rebuild(row: Any, names: dict[str, str], moves: list[MoveRow], now: Now, countdown: float) -> LiveMatch:
    """A match as its row and move log say it stands (``names``: its players' names, by id)."""
    fmt = Format(row.game, row.variant, row.limit_s)
    players = (Player(row.player_a, names.get(row.player_a, "?"), parse_rating(row.rating_a)),
               Player(row.player_b, names.get(row.player_b, "?"), parse_rating(row.rating_b)))
    clock = MatchClock(now)
    match = Match(row.id, fmt, check_seed(row.seed), row.nonce, clock, players, proved=bool(row.proved))
    if match.commitment != row.commitment:
        raise ValueError("the stored commitment does not match the stored deal")
    live = LiveMatch(match, clock, now)
    for move in moves:
        live.replay_row(move)
    # the clock goes on from the last logged moment: time while nobody played the match does not count
    clock.set_ms(live.logged_ms)
    if moves or countdown <= 0:
        clock.go_live()
    else:  # nothing logged yet: the players may not have seen the countdown through, so it starts again
        clock.go_live_at(now() + countdown)
    if match.is_over:
        live.over_at = now()
    return live


async def list_live(bus: Bus, live: LiveMatch, at: float) -> None:
    """List a match going on in the lobby (for spectators): its format and players, since ``at``."""
    players = [{"id": p.id, "name": p.name, "rating": round(p.rating.rating), "provisional": p.rating.provisional}
               for p in live.match.players]
    info = {"id": live.id, "format": live.match.format.key, "players": players, "at": at}
    await bus.hset("live_info", live.id, json.dumps(info).encode())


class Pages(Protocol):
    """What the matches owned here need of the rooms above them (the arena, :mod:`.routing`)."""

    async def show(self, conn: Connection, match_id: str, seen: int) -> None:
        """Put page ``conn`` of this process on match ``match_id`` (it has seen version ``seen``)."""

    def lost(self, live: LiveMatch) -> None:
        """The lease of ``live`` was lost: its pages, here and elsewhere, go on at its new owner."""

    async def changed(self) -> None:
        """Tell the lobby that a match began or ended."""


class OwnedMatches:
    """The live matches of this process (``matches``, by id) with their leases.

    ``pages`` are the pages of this process by id; ``above`` puts them on a match, follows a match whose
    lease was lost and tells the lobby (:class:`Pages`); ``fairplay`` gets both players' evidence when a
    match ends (None: nobody)."""

    def __init__(self, store: Store, bus: Bus, nodes: Nodes, out: Outbound, deals: DealStock, writer: GroupWriter,
                 pages: dict[str, Connection], above: Pages, *, now: Now, wall: Now, countdown: float,
                 fairplay: FairPlay | None = None) -> None:
        self.store = store
        self.bus = bus
        self.node = bus.node
        self.nodes = nodes
        self.out = out
        self.deals = deals
        self.writer = writer
        self.now = now
        self.wall = wall
        self.countdown = countdown
        self.pages = pages
        self.matches: dict[str, LiveMatch] = {}
        self.leases: dict[str, str] = {}  # match id -> the token of its lease
        self.takeovers = 0  # matches this process took over from one that stopped
        self._taking: dict[str, asyncio.Task[LiveMatch | None]] = {}  # take-overs under way, by match id
        self.renewed_at = time.monotonic()  # when the leases were last renewed (asked then, answered yes)
        self.above = above
        self.fairplay = fairplay
        self.unfreed: set[str] = set()  # matches over whose players the bus has not freed yet (tried again)

    # -- taking matches up -------------------------------------------------------------------

    async def take_up(self) -> int:
        """After a start: every live match of the database that nobody owns; returns how many."""
        taken = 0
        for match_id in await anyio.to_thread.run_sync(live_match_ids, self.store.engine):
            if match_id not in self.matches and await self.take_over(match_id) is not None:
                taken += 1
        return taken

    async def take_over(self, match_id: str) -> LiveMatch | None:
        """Own a live match nobody owns: take its lease and rebuild it from its log (None if the
        lease is held, or the database has no such match going on). Pages that ask for the match while
        its take-over here is under way wait for that one (:meth:`taking`): its lease is this process's
        already, and the match is not in :attr:`matches` yet."""
        task = self._taking.get(match_id)
        if task is None:
            task = asyncio.ensure_future(self._take_over(match_id))
            self._taking[match_id] = task
            task.add_done_callback(lambda _: self._taking.pop(match_id, None))
        return await asyncio.shield(task)

    def taking(self, match_id: str) -> bool:
        """Whether a take-over of ``match_id`` is under way here."""
        return match_id in self._taking

    async def _take_over(self, match_id: str) -> LiveMatch | None:
        token = await self.bus.acquire(f"match:{match_id}", LEASE_SECONDS)
        if token is None:
            return None
        try:
            saved = await anyio.to_thread.run_sync(
                functools.partial(saved_matches, self.store.engine, match_id=match_id))
            live = rebuild(*saved[0], self.now, self.countdown) if saved else None
        except (PatienceError, KeyError, TypeError, ValueError):
            log.exception("match %s cannot be rebuilt from its log", match_id)
            live = None
        except Exception:
            await self.bus.release(f"match:{match_id}", token)
            raise
        if live is None:
            await self._free_over(match_id)
            await self.bus.release(f"match:{match_id}", token)
            return None
        self.matches[live.id] = live
        self.leases[live.id] = token
        if not live.match.is_over:
            await self.bus.hset("live", live.id, self.node.encode())
            await list_live(self.bus, live, self.wall())
            for player in live.match.players:
                await self.bus.hset("busy", player.id, live.id.encode())
        else:
            await self._free(live.id, [player.id for player in live.match.players])
        self.takeovers += 1
        log.info("match %s is played here now (version %d)", live.id, live.version)
        return live

    async def playing(self, user_id: str, *, but: str | None = None) -> str | None:
        """The match ``user_id`` plays now (other than ``but``), by the shared ``busy``. An entry whose match
        is no longer listed in ``live`` is left over from a finished match (a match is listed before its
        players are marked busy, and they are freed before it is unlisted): it is deleted, and None."""
        found = await self.bus.hget("busy", user_id)
        if found is None or found.decode() == but:
            return None
        if await self.bus.hget("live", found.decode()) is None:
            if await self.bus.hget("busy", user_id) == found:
                await self.bus.hdel("busy", user_id)
                log.warning("%s was left busy with match %s, which is over: freed", user_id, found.decode())
            return None
        return found.decode()

    async def _free_over(self, match_id: str) -> None:
        """A match the database has over (or never had) that the bus may still list as going on: its owner
        died between the result's commit and freeing its players. Free them now (the lease is held here)."""
        if await self.bus.hget("live", match_id) is None:
            return
        over = await anyio.to_thread.run_sync(
            functools.partial(saved_matches, self.store.engine, state="over", match_id=match_id))
        players = [p for row, _, _ in over for p in (row.player_a, row.player_b)]
        if await self._free(match_id, players):
            log.info("match %s was over: its players are free", match_id)
            await self.above.changed()

    @property
    def fenced(self) -> bool:
        """Could the leases of this process have lapsed? (Not renewed for nearly their whole time: the bus
        did not answer.) Then nothing is played here, so that a match is never played by two processes:
        another may have taken it over meanwhile."""
        return self.bus.shared and time.monotonic() - self.renewed_at > LEASE_SECONDS - FENCE_MARGIN_SECONDS

    async def renew(self) -> None:
        """Renew the leases of the matches owned here (one command); let go of those lost."""
        held = dict(self.leases)
        asked = time.monotonic()
        kept = await self.bus.renew_many({f"match:{match_id}": token for match_id, token in held.items()},
                                         LEASE_SECONDS)
        self.renewed_at = asked
        for match_id in held:
            if f"match:{match_id}" not in kept and self.leases.get(match_id) == held[match_id]:
                if not self.bus.shared:  # an arena of one process: a lease that lapsed (a busy event loop)
                    token = await self.bus.acquire(f"match:{match_id}", LEASE_SECONDS)  # is nobody else's
                    if token is not None:
                        self.leases[match_id] = token
                        continue
                log.warning("the lease of match %s was lost: another process plays it now", match_id)
                self._let_go(match_id)

    async def sweep(self) -> None:
        """Take over the matches of processes that have stopped (no page needs to come back first)."""
        dead = await self.nodes.dead()
        if not dead:
            return
        left: set[str] = set()
        for match_id, node in (await self.bus.hgetall("live")).items():
            name = node.decode()
            if name not in dead or match_id in self.matches:
                continue
            if (await self.bus.holder(f"match:{match_id}") is None and await self.take_over(match_id) is None
                    and await self.bus.hget("live", match_id) is not None):
                left.add(name)
        for name in set(dead) - left:
            await self.nodes.forget(name)

    def _let_go(self, match_id: str) -> None:
        live = self.matches.pop(match_id, None)
        self.leases.pop(match_id, None)
        if live is not None:
            self.above.lost(live)

    async def stop(self) -> None:
        """Let go of every lease, so that other processes take the matches at once."""
        for match_id, token in list(self.leases.items()):
            try:
                await self.bus.release(f"match:{match_id}", token)
            except Exception:  # the bus is away: the leases lapse by themselves
                log.warning("the lease of match %s could not be given back", match_id)

    # -- making a match ------------------------------------------------------------------------

    async def make(self, fmt: Format, a: Side, b: Side, also: Iterable[Callable[[Any], None]] = (),
                   match_id: str | None = None) -> LiveMatch | None:
        """Make a match of ``a`` and ``b``, owned here; tell both pages, wherever they are."""
        deal, proved = await self.deals.take(fmt)  # a secret key: nobody can compute the deal before the end
        clock = MatchClock(self.now)
        clock.go_live_at(self.now() + self.countdown)  # both clocks start when the countdown ends
        players = (Player(a.user, a.name, a.rating), Player(b.user, b.name, b.rating))
        match = Match(match_id or secrets.token_urlsafe(12), fmt, deal, clock=clock, players=players, proved=proved)
        live = LiveMatch(match, clock, self.now)
        token = await self.bus.acquire(f"match:{live.id}", LEASE_SECONDS)
        try:
            if token is None:
                raise RuntimeError("a new match's lease is taken")
            # the match exists in the database before anyone is told of it
            await self.writer.write(before=[lambda connection: insert_match(connection, match), *also])
        except Exception:
            log.exception("match %s could not be started", live.id)
            for side in (a, b):
                self.tell_page(side.node, side.peer, encode_error("server_error",
                                                                  "the match could not be started: try again"))
            return None
        self.matches[live.id] = live
        self.leases[live.id] = token
        await self.bus.hset("live", live.id, self.node.encode())
        await list_live(self.bus, live, self.wall())
        for side in (a, b):
            await self.bus.hset("busy", side.user, live.id.encode())
        until = self.wall() + fmt.limit_s + self.countdown + MET_KEEP_SECONDS  # and again from its end (ended)
        await remember_met(self.bus, a.user, b.user, until)  # the pools pair them again only when nobody else waits
        for side in (a, b):
            conn = self.pages.get(side.peer) if side.node == self.node else None
            if conn is not None:
                if not conn.dropped:
                    await self.above.show(conn, live.id, 0)
            elif side.node != self.node:
                self.out.send(side.node, Matched(live.id, side.peer))
        await self.above.changed()
        return live

    def tell_page(self, node: str, peer: str, data: bytes) -> None:
        if node != self.node:
            self.out.to_peer(node, peer, data)
        elif (conn := self.pages.get(peer)) is not None:
            conn.send(data)

    # -- the clock -------------------------------------------------------------------------------

    async def tick(self) -> None:
        """The clock of every match owned here (time penalties, time-outs and heartbeats, logged
        before told): all their rows in one transaction."""
        due: list[tuple[LiveMatch, list[MoveRow], list[tuple[bytes, bytes]]]] = []
        if self.fenced:  # the leases may have lapsed: the clocks wait for the next renewal (or the takeover)
            return
        for live in list(self.matches.values()):
            if live.match.is_over or live.broken or live.lock.locked():
                continue  # a match playing an intent brings its clock up itself
            await live.lock.acquire()  # free: taken at once
            rows: list[MoveRow] = []
            out: list[tuple[bytes, bytes]] = []
            live.tick(rows, out, heartbeat=True)
            if rows:
                due.append((live, rows, out))
            else:
                live.lock.release()
        if due:
            # every match's clock rows in one transaction; each match stays locked until told
            ok = await self.commit_many([(live, rows) for live, rows, _ in due])
            for live, _, out in due:
                if ok:
                    if live.match.is_over:
                        await self.ended(live)  # freed before told, as after an intent
                    live.send(live.as_settled(out)[0])
                live.lock.release()
        for match_id in list(self.unfreed):
            if (unfreed := self.matches.get(match_id)) is not None:
                await self.ended(unfreed)
        await self._evict()

    async def _evict(self) -> None:
        now = self.now()
        for live in list(self.matches.values()):
            if (live.over_at is not None and now - live.over_at > OVER_KEEP_SECONDS and not any(live.conns)
                    and live.id not in self.unfreed):
                del self.matches[live.id]
                token = self.leases.pop(live.id, None)
                if token is not None:
                    await self.bus.release(f"match:{live.id}", token)

    # -- an intent -------------------------------------------------------------------------------

    async def play(self, conn: Peer, live: LiveMatch, intent: Intent) -> None:
        """Carry out ``intent`` of page ``conn`` on match ``live`` owned here: logged, then told."""
        side = conn.side
        key = (side, conn.cid, intent.ack)
        async with live.lock:
            seen = live.replies.get(key)
            if seen is not None:
                conn.send(seen)  # sent twice: the first answer again, nothing played twice
                return
            if intent.ack <= live.last_ack.get((side, conn.cid), -1):
                conn.error("stale_ack", f"ack {intent.ack} is older than this page's last one", intent.ack)
                return
            if live.broken or self.matches.get(live.id) is not live or self.fenced:
                conn.error("server_error", "the match is being restored: reconnect", intent.ack)
                return
            starts_in = live.starts_in_ms()
            if starts_in > 0 and not isinstance(intent, GiveUpIntent):  # a give-up counts at once, at 0:00
                conn.error("not_started", f"the clocks start in {starts_in / 1000:.1f} s: no move before that",
                           intent.ack)
                return
            live.last_ack[(side, conn.cid)] = intent.ack
            rows: list[MoveRow] = []
            out: list[tuple[bytes, bytes]] = []
            live.tick(rows, out)
            reply = live.carry_out(side, conn.cid, intent, rows, out)
            if rows and not await self.commit_many([(live, rows)]):
                conn.error("server_error", "the move could not be saved: reconnect", intent.ack)
                return
            out, settled = live.as_settled(out, reply)
            reply = settled or reply
            live.remember(key, reply)
            if live.match.is_over:  # both players free before either page is told the end: a seek or a
                await self.ended(live)  # challenge sent the moment the end shows is never answered in_match
            live.send(out)
            if not out or reply not in out[-1]:
                conn.send(reply)  # a rejection or an error goes to the sender only

    async def end_marked(self, live: LiveMatch, side: int) -> None:
        """Side ``side`` of a match owned here was marked while it goes on: the match ends now, both games
        given up in its name (the marked side's first), logged before told, as any end. The ladder's rules
        settle it (docs/fairplay.md, rule 3: nothing lost to the marked side, a match cut short before a real
        attempt void); both pages get the end with that reason."""
        async with live.lock:
            if live.match.is_over or live.broken or self.matches.get(live.id) is not live:
                return
            rows: list[MoveRow] = []
            out: list[tuple[bytes, bytes]] = []
            live.tick(rows, out)
            live.give_up_for([side, 1 - side], rows, out)
            if not await self.commit_many([(live, rows)]):
                return
            if live.match.is_over:
                await self.ended(live)
            live.send(live.as_settled(out)[0])

    async def commit_many(self, items: list[tuple[LiveMatch, list[MoveRow]]]) -> bool:
        """Write the rows (and the result of a match that just ended) before anyone is told;
        False if that failed: those matches are then rebuilt from what their logs hold."""
        after: list[Callable[[Any], None]] = []
        locks: list[int] = []
        for live, _ in items:
            if live.match.is_over and live.result is not None and live.over_at is None:
                result, ratings = live.result
                after.append(functools.partial(_finish, live, result, ratings))
                locks.extend(player_lock(player.id) for player in live.match.players)  # the batch's, in order
                live.over_at = self.now()
        try:
            await self.writer.write([(live.id, row) for live, rows in items for row in rows], after=after,
                                    locks=locks)
        except Exception:
            for live, _ in items:
                live.broken = True
                asyncio.get_running_loop().create_task(self._reload(live))
            return False
        for live, _ in items:
            if live.rated is not None and live.settled is None:
                live.settle(live.rated)  # the end tells what was applied, before anyone is told it
        return True

    async def _reload(self, live: LiveMatch) -> None:
        """After a failed write the match in memory is ahead of its log: rebuild it from the log."""
        for conns in live.conns:
            for conn in list(conns):
                conn.error("server_error", "the match is being restored from its log: reconnect")
        try:
            saved = await anyio.to_thread.run_sync(
                functools.partial(saved_matches, self.store.engine, match_id=live.id))
        except Exception:
            log.exception("cannot read the move log again")
            return
        if not saved:
            return
        fresh = rebuild(*saved[0], self.now, self.countdown)
        fresh.conns = live.conns
        self.matches[live.id] = fresh
        for side, conns in enumerate(fresh.conns):
            for conn in conns:
                conn.match = fresh
                conn.send(encode(fresh.snapshot(side)))

    async def ended(self, live: LiveMatch) -> None:
        """A match owned here is over (its result committed): hand over the fair-play evidence, free both
        players at once and take the match out of the lobby's list."""
        if self.fairplay is not None and not live.evidence_sent:
            live.evidence_sent = True
            games = live.match.record()["games"]
            for side, player in enumerate(live.match.players):
                self.fairplay.game_over(live.views[side].evidence(
                    f"m:{live.id}:{side}", player.id, live.id, player.rating.rating, "duel", games[side]))
        if not live.met_renewed:  # whom each met last counts from the end on (the pools prune it after)
            live.met_renewed = True
            until = self.wall() + MET_KEEP_SECONDS
            a, b = (player.id for player in live.match.players)
            with contextlib.suppress(Exception):
                await remember_met(self.bus, a, b, until)
        if await self._free(live.id, [player.id for player in live.match.players]):
            await self.above.changed()

    async def _free(self, match_id: str, players: Iterable[str]) -> bool:
        """A match is over: its players are free (``busy``) and it is no longer listed (``live_info``, then
        ``live``, which :meth:`sweep` goes by: a process that dies halfway leaves it to be found). False if
        the bus did not answer: :meth:`tick` tries again until it has been done."""
        try:
            for player in players:
                if await self.bus.hget("busy", player) == match_id.encode():  # not a newer match's (a rematch)
                    await self.bus.hdel("busy", player)
            await self.bus.hdel("live_info", match_id)
            await self.bus.hdel("live", match_id)
        except Exception:
            log.warning("the players of match %s could not be freed yet: tried again at the next tick", match_id)
            self.unfreed.add(match_id)
            return False
        self.unfreed.discard(match_id)
        return True
