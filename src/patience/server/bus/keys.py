"""Every name the processes of an arena share on the bus, each with the one feature that owns it.

On Redis, hashes, leases and rate counters live in one key space (``patience:`` + the name), so
two features that pick the same name for different things break each other: a sign-in's rate
counter once made the key that the sign-in lock of the same address then found taken, and nobody
could sign in. Channels of Pub/Sub are a space of their own.

A name belongs to exactly one :class:`Family` here. Only its owner (a module) writes it; any
module may read it. ``tests/test_bus_keys.py`` reads the source of the server, lists the names
each module uses with the bus and holds them to this table: a name no family declares, a family
used as another kind than its own, a write from a module that is not the owner, or two families
whose names can meet, all fail it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["FAMILIES", "Family", "clash"]

Kind = Literal["hash", "lease", "rate", "channel"]


@dataclass(frozen=True)
class Family:
    """Names ``pattern`` (``{…}`` stands for any text) of ``kind``, written only by module ``owner``."""

    pattern: str
    kind: Kind
    owner: str
    what: str

    @property
    def fixed(self) -> str:
        """The text every name of the family starts with (the whole name if it has no ``{…}``)."""
        return self.pattern.split("{", 1)[0]

    @property
    def exact(self) -> bool:
        return "{" not in self.pattern


_POOLS = "patience.server.arena.pools"
_NODES = "patience.server.arena.nodes"
_OWNED = "patience.server.arena.owned"
_VIEW = "patience.server.arena.view"
_CHALLENGES = "patience.server.arena.challenges"

FAMILIES: tuple[Family, ...] = (
    # accounts
    Family("rate:signin:{address}", "rate", "patience.server.accounts.service", "sign-in tries of an address a minute"),
    Family("rate:signup:{address}", "rate", "patience.server.accounts.service", "sign-ups of an address"),
    Family("rate:signups-site", "rate", "patience.server.accounts.service", "sign-ups of the whole site a minute"),
    Family("rate:signups-newcomers", "rate", "patience.server.accounts.service",
           "sign-ups a minute from addresses new lately, once the site's are past its bound"),
    Family("signup-seen:{address}", "lease", "patience.server.accounts.service", "an address made an account lately"),
    Family("lock:signin:{address}", "lease", "patience.server.accounts.service",
           "the sign-ins of one address checked one at a time"),
    Family("signout", "channel", "patience.server.accounts.service", "a session ended: every process forgets it"),
    Family("rate:pwcheck:{user}", "rate", "patience.server.accounts.service",
           "passwords an account typed again (to change it, set its e-mail, close it)"),
    Family("rate:rename:{user}", "rate", "patience.server.accounts.service",
           "display name changes of an account a day"),
    Family("rate:reset:addr:{address}", "rate", "patience.server.accounts.service",
           "password reset requests of an address"),
    Family("rate:newpw:{address}", "rate", "patience.server.accounts.service",
           "new passwords set with reset links from an address"),
    Family("rate:reset:user:{user}", "rate", "patience.server.accounts.service", "password reset mails to an account"),
    Family("rate:reset:mail:{sha256}", "rate", "patience.server.accounts.service",
           "password reset mails to an e-mail address (its hash)"),
    # solo games
    Family("game:{id}", "lease", "patience.server.solo.hub", "the process that plays a solo game"),
    Family("solo:{node}", "channel", "patience.server.solo.hub", "a process asked to hand a solo game over"),
    # the processes of the arena
    Family("node:{node}", "lease", _NODES, "a process is alive"),
    Family("nodes", "hash", _NODES, "the processes that joined (of those that stopped, matches are taken over)"),
    Family("node:{node}", "channel", _NODES, "envelopes for one process"),
    # the lobby and its pools
    Family("pool:{format}", "hash", _POOLS, "the players waiting in a pool"),
    Family("seeking", "hash", _POOLS, "the pool each waiting player is in"),
    Family("unpooled", "hash", _POOLS,
           "a process's seekers taken out of their pools while it looked stopped (it puts them back)"),
    Family("pairer", "lease", _POOLS, "the one process that pairs the pools in waves"),
    Family("online", "hash", _VIEW, "the duel pages open, by player and page"),
    Family("lobby_pages", "hash", _VIEW, "where each player's lobby page is"),
    Family("lobby", "channel", _VIEW, "the lobby changed"),
    Family("lobby_view", "channel", _VIEW, "the lobby as the pairer read it, for every process to tell its pages"),
    # challenges
    Family("challenges", "hash", _CHALLENGES, "open challenge links"),
    Family("challenge_of", "hash", _CHALLENGES, "each player's open challenge"),
    Family("challenges_taken", "hash", _CHALLENGES, "challenge links taken up, for a day"),
    Family("lock:challenge:{code}", "lease", _CHALLENGES, "one player at a time accepts a challenge"),
    # Play now
    Family("playnow", "channel", "patience.server.arena.apart",
           "a match of Play now came to its end: tell its players"),
    # live matches
    Family("match:{id}", "lease", _OWNED, "the process that owns a live match"),
    Family("live", "hash", _OWNED, "the matches going on and their owners"),
    Family("live_info", "hash", _OWNED, "the matches going on as the lobby lists them"),
    Family("busy", "hash", _OWNED, "the match each player plays now"),
    Family("met", "hash", _POOLS, "whom each player met last and until when it counts (the pools pair them apart "
           "and delete the lapsed fields)"),
    # fair play
    Family("marked", "channel", "patience.server.arena.routing",
           "an account was marked: every process closes the rematches of its matches with it"),
    Family("rate:report:{user}", "rate", "patience.server.web.fairplay", "reports an account made, an hour"),
    # operating the site
    Family("metrics", "hash", "patience.server.metrics", "never written: a scrape reads it to time a bus round trip"),
    # tournaments
    Family("tour_pages:{id}", "hash", "patience.server.arena.tournaments", "the pages open on a tournament"),
    Family("lock:tourmake:{user}", "lease", "patience.server.arena.tournaments",
           "an account's tournaments made one at a time (its open ones counted right)"),
    Family("rate:tourmake:user:{user}", "rate", "patience.server.arena.tournaments", "tournaments an account made"),
    Family("rate:tourmake:addr:{address}", "rate", "patience.server.arena.tournaments",
           "tournaments the accounts of an address made"),
    Family("rate:tourpw:first:{tournament}:{user}", "rate", "patience.server.arena.tournaments",
           "an account's first try of a tournament's password"),
    Family("rate:tourpw:again:{tournament}:{user}", "rate", "patience.server.arena.tournaments",
           "an account's further tries of a tournament's password"),
    Family("rate:tourpw:tour:{tournament}", "rate", "patience.server.arena.tournaments",
           "the further tries of a tournament's password, of all accounts"),
    Family("rate:tourpw:user:{user}", "rate", "patience.server.arena.tournaments",
           "an account's tries of tournament passwords"),
    Family("rate:tourpw:addr:{address}", "rate", "patience.server.arena.tournaments",
           "the tries of tournament passwords of an address's accounts"),
)


def clash(a: Family, b: Family) -> bool:
    """Can a name of ``a`` be a name of ``b`` (in the same space: channels apart from the rest)?"""
    if (a.kind == "channel") != (b.kind == "channel"):
        return False
    if a.exact and b.exact:
        return a.pattern == b.pattern
    if a.exact:
        return a.pattern.startswith(b.fixed)
    if b.exact:
        return b.pattern.startswith(a.fixed)
    return a.fixed.startswith(b.fixed) or b.fixed.startswith(a.fixed)
