"""The accounts service: sign up, sign in, sign out, the display name and the account page, with the
safeguards they need (the rules are said in :mod:`patience.server.accounts`).

:class:`Accounts` keeps the rules and the limits on the event loop; the hashes wait their turn in
:class:`patience.server.accounts.hashing.Hashing`, and every statement of the database runs on a thread
in :class:`patience.server.storage.accounts.AccountRows`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from argon2 import PasswordHasher

from patience.server.accounts.hashing import HASHES_AT_ONCE, HASHES_WAITING, SIGNIN, SIGNUP, Hashing, owasp_hasher
from patience.server.bus import Bus, BusError, MemoryBus
from patience.server.identity import AccountError, User, address_group
from patience.server.storage.accounts import SESSION_ID, AccountRows, RateLimiter, token_hash
from patience.server.storage.store import Store, server_secret

if TYPE_CHECKING:
    from patience.server.mail import Mailer

__all__ = ["Accounts", "clean_name"]

LOGIN = re.compile(r"^[a-z0-9][a-z0-9_.-]{2,31}$")
MIN_PASSWORD = 8
MAX_PASSWORD = 256
MAX_NAME = 40

SIGNINS_PER_ADDRESS = 30  # sign-in tries (right or wrong) per address a minute
SIGNUPS_PER_ADDRESS = 20  # new accounts per address in SIGNUP_WINDOW seconds
SIGNUP_WINDOW = 600.0
SIGNUPS_PER_MINUTE = 30  # new accounts a minute on the whole site before only new addresses may sign up
NEWCOMERS_PER_MINUTE = 120  # new accounts a minute from addresses new in SIGNUP_WINDOW, beyond those
DB_THREADS = 2
PLAYER_NAME_DRAWS = 8  # "Player N" names drawn for a sign-up without a name, while the one drawn is taken

RENAMES_PER_DAY = 1  # display name changes an account may make a day (each old name is kept for moderators)
PASSWORD_CHECKS = 10  # passwords an account may type (to change it, set its e-mail, close it) in CHECKS_WINDOW
CHECKS_WINDOW = 600.0
RESETS_PER_ADDRESS = 5  # "forgot my password" forms an address may send an hour
RESETS_PER_ACCOUNT = 3  # reset mails an account (and an e-mail address) may get an hour
EMAIL = re.compile(r"^[^@\s<>()\[\],;:\"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)+$")


# letters that show as nothing (blank fillers) though Unicode calls them letters or symbols
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")


def _script(char: str) -> str:
    """The script of a letter, from its Unicode name (LATIN, CYRILLIC, GREEK, CJK, …)."""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else "?"


def clean_name(name: str) -> str:
    """A display name: NFKC-normalised, trimmed, inner spaces folded, 1..40 printable characters.

    Refused: invisible characters (format characters, blank fillers such as U+3164), more than two
    combining marks on one letter, and letters of several scripts among Latin, Greek and Cyrillic
    (``Pаypal`` with a Cyrillic ``а`` would pass for another's name)."""
    text = " ".join(unicodedata.normalize("NFKC", str(name)).split())
    if not text or len(text) > MAX_NAME or not text.isprintable() or any(c in text for c in "<>"):
        raise AccountError("bad_name", f"a name is 1 to {MAX_NAME} characters (no < or >)")
    marks = 0
    for char in text:
        if char in _BLANKS or unicodedata.category(char) == "Cf":
            raise AccountError("bad_name", "a name cannot hold invisible characters")
        marks = marks + 1 if unicodedata.combining(char) else 0
        if marks > 2:
            raise AccountError("bad_name", "a name cannot pile marks on a letter")
    scripts = {_script(c) for c in text if c.isalpha()} & {"LATIN", "GREEK", "CYRILLIC"}
    if len(scripts) > 1:
        raise AccountError("bad_name", "a name writes its letters in one alphabet (no look-alike letters)")
    if not any(c.isalnum() for c in text):
        raise AccountError("bad_name", "a name has at least one letter or digit")
    return text


def _player_name() -> str:
    """The name of an account signed up without one: "Player" and a number (the login stays private)."""
    return f"Player {secrets.randbelow(900_000) + 100_000}"


class Accounts:
    """Users, their sessions and browsers in the store; the CSRF key; the sign-in rate limits."""

    def __init__(self, store: Store, *, bus: Bus | None = None, now: Callable[[], float] = time.time,
                 hasher: PasswordHasher | None = None, login_limit: int = 5, address_limit: int = 20,
                 window: float = 300.0, hashes_at_once: int = HASHES_AT_ONCE,
                 hashes_waiting: int = HASHES_WAITING, signups: int = SIGNUPS_PER_ADDRESS,
                 site_signups: int = SIGNUPS_PER_MINUTE, newcomers: int = NEWCOMERS_PER_MINUTE,
                 mailer: Mailer | None = None, public_url: str = "") -> None:
        self.store = store
        self.bus = bus or MemoryBus()
        self.hasher = hasher or owasp_hasher()
        self.hashing = Hashing(self.hasher, hashes_at_once, hashes_waiting)
        self.signups = signups
        self.site_signups, self.newcomers = site_signups, newcomers
        # the threads sign-ins and sign-ups may use for the database at once: a storm of them must not
        # take every thread of the shared pool, which the games' group commits need
        self._db_threads = anyio.CapacityLimiter(DB_THREADS)
        # ``now`` is a wall clock: the failures are kept across restarts
        self.by_login = RateLimiter(store, login_limit, window, now)
        self.by_address = RateLimiter(store, address_limit, window, now)
        self.rows = AccountRows(store, self.by_login, self.by_address)
        self._csrf_key: bytes | None = None
        self._sockets: dict[str, set[Callable[[], None]]] = {}  # session token hash -> its pages' "signed out"
        self.mailer = mailer  # sends the password reset links (None: no mail, no reset)
        self.public_url = public_url  # the site's address, for the links in mails
        # a hash to check against when the login is unknown, so that the answer takes as long
        self._dummy = self.hasher.hash(secrets.token_hex(8))

    async def _db(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._db_threads)

    # -- CSRF --------------------------------------------------------------------------------

    def csrf_key(self) -> bytes:
        if self._csrf_key is None:
            self._csrf_key = server_secret(self.store.engine, "csrf")
        return self._csrf_key

    def csrf_token(self, browser: str) -> str:
        return hmac.new(self.csrf_key(), f"csrf|{browser}".encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, browser: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(self.csrf_token(browser), str(token))

    # -- accounts ----------------------------------------------------------------------------

    async def sign_up(self, login: str, name: str, password: str, browser: str | None,
                      address: str = "?", agent: str | None = None) -> tuple[User, str]:
        """A new account, signed in: the user and the session token for the cookie.

        Without a display name, the account is shown as "Player" and a number: the login name, which
        signs in, stays private."""
        login = str(login).strip().lower()
        if not LOGIN.match(login):
            raise AccountError("bad_login", "a login name is 3 to 32 letters, digits, '.', '_' or '-'")
        chosen = bool(str(name or "").strip())
        display = clean_name(name) if chosen else _player_name()
        if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise AccountError("bad_password", f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters")
        address = address_group(address)
        wait = await self.bus.hit(f"rate:signup:{address}", SIGNUP_WINDOW, self.signups)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rate_limited", f"too many new accounts from here: try again in {seconds} s", 429,
                               seconds)
        await self._db(self.rows.login_free, login)  # before anything is counted: a taken name costs nothing
        if chosen:  # (a drawn "Player" name is checked by the insert, and drawn again there if taken)
            await self._db(self.rows.name_free, display)
        seen, counted = await self._site_signup(address)
        try:
            digest = await self.hashing.hash(password, lane=SIGNUP, key=address)
            for attempt in range(PLAYER_NAME_DRAWS):
                user = User(secrets.token_urlsafe(12), login, display)
                try:
                    await self._db(self.rows.insert_user, user, digest, browser, address)
                    break
                except AccountError as exc:  # the name is another account's (or became so meanwhile)
                    if chosen or exc.code != "name_taken" or attempt == PLAYER_NAME_DRAWS - 1:
                        raise
                    display = _player_name()  # a drawn name: draw again (one in nine at 100,000 accounts)
        except BaseException:
            # no account made: the address is still new, and the site's counts are given back (else
            # a storm's sign-ups refused by the busy hashing would spend the newcomers' share)
            if seen is not None:
                await self.bus.release(f"signup-seen:{address}", seen)
            for key, member in counted:
                await self.bus.unhit(key, member)
            raise
        return user, await self._db(self.rows.new_session, user.id, agent)

    async def _site_signup(self, address: str) -> tuple[str | None, list[tuple[str, str]]]:
        """Count a sign-up against the site's bound, or refuse it (see the module's text): the lease that
        marks ``address`` as having made an account lately, if it is new, and the counts it was counted in
        (both given back if the sign-up fails)."""
        seen = await self.bus.acquire(f"signup-seen:{address}", SIGNUP_WINDOW)  # None: not new in the window
        member = secrets.token_hex(8)  # names this sign-up in the counts
        counted: list[tuple[str, str]] = []
        busy = await self.bus.hit("rate:signups-site", 60.0, self.site_signups, member)
        if not busy:
            counted.append(("rate:signups-site", member))
        else:
            wait = busy
            if seen is not None:
                wait = await self.bus.hit("rate:signups-newcomers", 60.0, self.newcomers, member)
                if not wait:
                    counted.append(("rate:signups-newcomers", member))
            if wait:
                if seen is not None:
                    await self.bus.release(f"signup-seen:{address}", seen)
                seconds = max(1, int(wait + 0.999))
                raise AccountError("rate_limited", "many new accounts on the site just now: try again in "
                                   f"{seconds} s", 429, seconds)
        return seen, counted

    async def sign_in(self, login: str, password: str, browser: str | None, address: str,
                      old_token: str | None = None, agent: str | None = None) -> tuple[User, str]:
        """Check the password (under the rate limits) and open a session (``old_token``'s is closed).

        The failures counted are those of this login from this address, and of this address: a
        stranger's guesses slow the stranger, never the owner. The sign-ins of one address take
        turns under a lock of the bus, so that parallel guesses cannot pass the limit. The hash waits
        in the sign-ins' queue of :class:`Hashing`, ranked by what the database knows before it: a
        browser the account has signed in on goes first, then the addresses by their failures."""
        login = str(login).strip().lower()
        address = address_group(address)
        login_key, address_key = f"login:{login}|addr:{address}", f"addr:{address}"
        wait_s = await self.bus.hit(f"rate:signin:{address}", 60.0, SIGNINS_PER_ADDRESS)
        if wait_s:  # a script hammering the form: answered before any database work
            wait = max(1, int(wait_s + 0.999))
            raise AccountError("rate_limited", f"too many sign-ins from here: try again in {wait} s", 429, wait)
        try:
            async with self.bus.lock(f"lock:signin:{address}", ttl_s=30.0, wait_s=10.0):
                wait, found, rank = await self._db(self.rows.before_hash, login, login_key, address_key, browser)
                if wait:
                    raise AccountError("rate_limited", f"too many failed sign-ins: try again in {wait} s", 429, wait)
                ok = await self.hashing.verify(found[1] if found else self._dummy, password, lane=SIGNIN,
                                               key=address, rank=rank)
                if not ok or found is None:
                    await self._db(self.rows.failed, login_key, address_key)
                    raise AccountError("wrong_password", "wrong login name or password", 401)
        except BusError:
            raise AccountError("busy", "too many sign-ins from here at once: try again in a few seconds", 429,
                               3) from None
        user, stored = found
        rehashed = (await self.hashing.hash(password, lane=SIGNIN, key=address)
                    if self.hasher.check_needs_rehash(stored) else None)
        user = await self._db(self.rows.signed_in, user, login_key, browser, rehashed, old_token, address)
        return user, await self._db(self.rows.new_session, user.id, agent)

    # -- the play sockets of a session ---------------------------------------------------------

    async def start(self) -> None:
        """Hear of sign-outs on every process of the arena."""
        await self.bus.subscribe("signout", self._heard_sign_out)

    def watch(self, token: str | None, signed_out: Callable[[], None]) -> Callable[[], None]:
        """Call ``signed_out`` when the session of ``token`` ends (on any process); returns the undo."""
        if not token:
            return lambda: None
        key = token_hash(token)
        self._sockets.setdefault(key, set()).add(signed_out)

        def forget() -> None:
            watchers = self._sockets.get(key)
            if watchers is not None:
                watchers.discard(signed_out)
                if not watchers:
                    del self._sockets[key]
        return forget

    async def signed_out(self, token: str | None) -> None:
        """Tell every process that the session of ``token`` ended: its open play sockets close."""
        if token:
            await self.bus.publish("signout", token_hash(token).encode())

    def _heard_sign_out(self, data: bytes) -> None:
        for signed_out in list(self._sockets.pop(data.decode(), ())):
            signed_out()

    def sign_out(self, token: str | None) -> None:
        self.rows.sign_out(token)

    def user_for(self, token: str | None) -> User | None:
        """The user a session token belongs to, if the session is still open."""
        return self.rows.user_for(token)

    def rename(self, user_id: str, name: str) -> User:
        """Give the account the display name ``name``; the one it had is kept for moderators (``user_names``)."""
        return self.rows.rename(user_id, clean_name(name))

    def user(self, user_id: str) -> User | None:
        return self.rows.user(user_id)

    def browsers(self, user_id: str) -> list[str]:
        return self.rows.browsers(user_id)

    # -- the account page: password, sessions, name, e-mail, export, closing ------------------------

    async def _ended(self, hashes: list[str]) -> None:
        """Tell every process that these sessions ended: their open play sockets close."""
        for key in hashes:
            await self.bus.publish("signout", key.encode())

    async def check_password(self, user_id: str, password: str, address: str = "?") -> str:
        """Refuse (401 ``wrong_password``) unless ``password`` is the account's; the typed passwords of an
        account are limited (:data:`PASSWORD_CHECKS` in :data:`CHECKS_WINDOW`), right or wrong. Returns
        the stored hash."""
        wait = await self.bus.hit(f"rate:pwcheck:{user_id}", CHECKS_WINDOW, PASSWORD_CHECKS)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rate_limited", f"too many passwords typed: try again in {seconds} s", 429, seconds)
        stored = await self._db(self.rows.hash_of, user_id)
        ok = await self.hashing.verify(stored or self._dummy, str(password)[:MAX_PASSWORD + 1], lane=SIGNIN,
                                       key=address_group(address), rank=0)
        if not ok or not stored:
            raise AccountError("wrong_password", "wrong password", 401)
        return stored

    async def change_password(self, user_id: str, old: str, new: str, token: str | None,
                              address: str = "?") -> None:
        """Set a new password (the old one typed again); every other session of the account ends, on
        every process, and any reset link sent before stops working."""
        if not MIN_PASSWORD <= len(new) <= MAX_PASSWORD:
            raise AccountError("bad_password", f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters")
        await self.check_password(user_id, old, address)
        digest = await self.hashing.hash(new, lane=SIGNIN, key=address_group(address))
        keep = token_hash(token) if token else None
        await self._ended(await self._db(self.rows.set_password, user_id, digest, keep))

    def sessions(self, user_id: str, token: str | None) -> list[dict[str, Any]]:
        """The account's open sessions, the newest first, and which one is this browser's
        (:meth:`patience.server.storage.accounts.AccountRows.sessions`)."""
        return self.rows.sessions(user_id, token)

    async def end_session(self, user_id: str, session_id: str) -> bool:
        """End one session of the account (by the id :meth:`sessions` gave it); False if there is none."""
        if not re.fullmatch(rf"[0-9a-f]{{{SESSION_ID}}}", str(session_id)):
            return False
        ended = await self._db(self.rows.end_one, user_id, str(session_id))
        await self._ended(ended)
        return bool(ended)

    async def change_name(self, user_id: str, name: str) -> User:
        """A new display name, at most :data:`RENAMES_PER_DAY` a day (the same name again costs nothing);
        the old one is kept for moderators."""
        display = clean_name(name)
        current = await self._db(self.rows.user, user_id)
        if current is None:
            raise AccountError("no_user", "no such account", 404)
        if current.name == display:
            return current
        await self._db(self.rows.name_free, display, user_id)
        wait = await self.bus.hit(f"rate:rename:{user_id}", 86_400.0, RENAMES_PER_DAY)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rename_limited", f"the name was changed lately: try again in {seconds} s", 429,
                               seconds)
        return await self._db(self.rename, user_id, display)

    def former_names(self, user_id: str) -> list[tuple[str, int]]:
        """The display names the account had and until when (ms), the oldest first: for moderators."""
        return self.rows.former_names(user_id)

    def email_of(self, user_id: str) -> str | None:
        return self.rows.email_of(user_id)

    async def set_email(self, user_id: str, email: str, password: str, address: str = "?") -> str | None:
        """Set (or, empty, remove) the account's e-mail address, which only a password reset uses; the
        password is typed again, since the address can set a new one."""
        text = str(email or "").strip()
        if text and (len(text) > 254 or not EMAIL.match(text)):
            raise AccountError("bad_email", "that is not an e-mail address")
        if text:
            local, _, domain = text.rpartition("@")
            text = f"{local}@{domain.lower()}"
        await self.check_password(user_id, password, address)
        await self._db(self.rows.store_email, user_id, text or None)
        return text or None

    def export(self, user_id: str) -> dict[str, Any] | None:
        from patience.server.storage.export import export_account

        return export_account(self.store.engine, user_id)

    async def close(self, user_id: str, password: str, address: str = "?") -> None:
        """Close the account (the password typed again): see :mod:`patience.server.storage.roles`. Not in
        the middle of a duel: its end would write the name back."""
        await self.check_password(user_id, password, address)
        if await self.bus.hget("busy", user_id) is not None:
            raise AccountError("playing", "finish your match first", 409)
        await self._ended(await self._db(self.rows.close, user_id))

    # -- a forgotten password: a reset link by e-mail -------------------------------------------------

    async def request_reset(self, who: str, address: str, send: Callable[[str, str], Any]) -> None:
        """Send a reset link to the e-mail address of the account whose login name or address is ``who``,
        if there is one; the answer is the same either way (only the limit of the address is said).
        ``send(email, token)`` sends the mail (off the event loop, its failure logged)."""
        address = address_group(address)
        wait = await self.bus.hit(f"rate:reset:addr:{address}", 3600.0, RESETS_PER_ADDRESS)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rate_limited", f"too many reset requests from here: try again in {seconds} s", 429,
                               seconds)
        text = str(who or "").strip()
        if not text or len(text) > 254:
            return
        found = await self._db(self.rows.reset_target, text)
        if found is None:
            return
        user_id, email = found
        mail_key = hashlib.sha256(email.encode()).hexdigest()
        if (await self.bus.hit(f"rate:reset:user:{user_id}", 3600.0, RESETS_PER_ACCOUNT)
                or await self.bus.hit(f"rate:reset:mail:{mail_key}", 3600.0, RESETS_PER_ACCOUNT)):
            return  # enough mails lately: the same answer, no mail
        token = secrets.token_urlsafe(32)
        await self._db(self.rows.store_reset, user_id, token)
        send(email, token)

    async def reset_password(self, token: str, new: str, address: str = "?") -> None:
        """Set a new password with a reset link's token: once, within :data:`RESET_MINUTES`; every
        session of the account ends, and every other link stops working."""
        if not MIN_PASSWORD <= len(new) <= MAX_PASSWORD:
            raise AccountError("bad_password", f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters")
        address = address_group(address)
        wait = await self.bus.hit(f"rate:newpw:{address}", 3600.0, RESETS_PER_ADDRESS * 4)
        if wait:
            seconds = max(1, int(wait + 0.999))
            raise AccountError("rate_limited", f"too many tries from here: try again in {seconds} s", 429, seconds)
        text = str(token or "")
        if not 20 <= len(text) <= 100 or await self._db(self.rows.reset_user, text) is None:
            raise AccountError("bad_token", "this link is used or too old: ask for a new one", 400)
        digest = await self.hashing.hash(new, lane=SIGNIN, key=address)
        ended = await self._db(self.rows.use_reset, text, digest)
        if ended is None:  # used at the same moment by another try
            raise AccountError("bad_token", "this link is used or too old: ask for a new one", 400)
        await self._ended(ended)

    async def reset_link_works(self, token: str) -> bool:
        """Whether a reset link's token would set a password now (not used, not too old): the page says so
        before it shows the link's form. It changes nothing; a token is too long (32 random bytes) to guess."""
        text = str(token or "")
        return 20 <= len(text) <= 100 and await self._db(self.rows.reset_user, text) is not None
