"""The accounts' rows: users, their sessions, browsers, former names, password reset links and failed
sign-ins (the tables are in :mod:`patience.server.storage.store`).

The accounts service (:mod:`patience.server.accounts`) keeps its rules and its limits on the event
loop; every statement it needs of the database is here, run on a thread: :class:`AccountRows` (a
short transaction a call) and :class:`RateLimiter` (failures counted per key in a window). A token's
SHA-256 alone is kept (:func:`token_hash`), so a leaked table opens no session.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from patience.server.identity import AccountError, User, browser_label
from patience.server.storage.apart import net_of
from patience.server.storage.ladder import add_traces, browser_trace
from patience.server.storage.roles import RESERVED_DAYS, ClosedLoginRow
from patience.server.storage.store import (
    AuthSessionRow,
    PasswordResetRow,
    SigninFailureRow,
    Store,
    UserBrowserRow,
    UserNameRow,
    UserRow,
    name_key,
    now_ms,
)

__all__ = ["RESET_MINUTES", "SEEN_EVERY_MS", "SESSION_DAYS", "SESSION_ID", "AccountRows", "RateLimiter", "token_hash"]

SESSION_DAYS = 30
SEEN_EVERY_MS = 300_000  # a session's "last seen" is written at most this often
RESET_MINUTES = 30  # a password reset link works this long, once
SESSION_ID = 16  # hex digits of a session's hash that name it on the account page


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _traces(browser: str | None, address: str) -> list[tuple[str, str]]:
    """What a sign-up or sign-in leaves for linking accounts (docs/fairplay.md): digests of the address
    group and of the browser, never the address itself."""
    out = [("browser", browser_trace(browser))] if browser else []
    if address and address != "?":
        out.append(("net", net_of(address)))
    return out



class RateLimiter:
    """At most ``limit`` failures per key in ``window`` seconds; the next try must wait.

    The failures are rows of the store (table ``signin_failures``: the SHA-256 of the key and the
    time on ``now``, a wall clock), so that a restart of the server does not reset the count;
    rows older than the window are deleted as new failures come."""

    def __init__(self, store: Store, limit: int, window: float, now: Callable[[], float] = time.time) -> None:
        self.store = store
        self.limit = limit
        self.window = window
        self.now = now

    @staticmethod
    def _key(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    def _ms(self, seconds: float) -> int:
        return round(seconds * 1000)

    def recent(self, db: Session, key: str) -> list[int]:
        """The times (ms) of the last ``limit`` failures of ``key`` in the window, the newest first."""
        edge = self._ms(self.now() - self.window)
        return list(db.scalars(select(SigninFailureRow.at_ms)
                               .where(SigninFailureRow.key_hash == self._key(key), SigninFailureRow.at_ms > edge)
                               .order_by(SigninFailureRow.at_ms.desc()).limit(self.limit)))

    def wait_after(self, times: list[int]) -> int:
        """Seconds until a key whose :meth:`recent` failures are ``times`` may try again (0: now)."""
        if len(times) < self.limit:
            return 0
        # the oldest of the last ``limit`` failures must leave the window
        return max(1, int(times[-1] / 1000 + self.window - self.now() + 0.999))

    def wait(self, key: str) -> int:
        """Seconds until ``key`` may try again (0: now)."""
        with Session(self.store.engine) as db:
            return self.wait_after(self.recent(db, key))

    def fail(self, key: str) -> None:
        now = self._ms(self.now())
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(SigninFailureRow).where(SigninFailureRow.at_ms <= now - self._ms(self.window)))
            db.add(SigninFailureRow(key_hash=self._key(key), at_ms=now))

    def forget(self, key: str) -> None:
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(SigninFailureRow).where(SigninFailureRow.key_hash == self._key(key)))


def _name_free(db: Session, name: str, user_id: str | None) -> None:
    """Refuse a display name another account has, letters' case and width aside: a name names one player
    (the unique index on ``users.name_key`` holds it against two sign-ups at the same instant)."""
    other = db.scalar(select(UserRow.id).where(UserRow.name_key == name_key(name), UserRow.id != (user_id or ""))
                      .limit(1))
    if other is not None:
        raise _name_taken(name)


def _login_free(db: Session, login: str, at_ms: int) -> None:
    """Refuse a login name an account has, or a closed account's while it is reserved (at ``at_ms``)."""
    if db.scalar(select(UserRow.id).where(UserRow.login == login)) is not None:
        raise AccountError("login_taken", f"the login name {login!r} is taken", 409)
    closed = _reserved(db, login, at_ms)
    if closed is not None:
        free = time.strftime("%Y-%m-%d", time.gmtime(closed.closed_ms / 1000 + RESERVED_DAYS * 86400))
        raise AccountError("login_taken", f"the login name {login!r} belonged to an account closed lately: it is "
                           f"kept for its player until {free}", 409)


def _reserved(db: Session, login: str, at_ms: int) -> Any:
    """The reservation of a closed account's login name, if its time is not up (one whose time is up counts
    for nothing, and is replaced when the login's next account closes)."""
    row = db.get(ClosedLoginRow, login)
    if row is not None and row.closed_ms <= at_ms - RESERVED_DAYS * 86_400_000:
        return None
    return row


def _reopen(db: Session, user: User) -> User:
    """Give the closed account ``user`` (its id and its reserved login) back to its player: its login name
    and password, and the display name it had if no other account has taken it meanwhile."""
    closed = db.get(ClosedLoginRow, user.login)
    row = db.get(UserRow, user.id)
    if closed is None or row is None or closed.user_id != user.id:
        raise AccountError("wrong_password", "wrong login name or password", 401)
    name = row.name
    former = db.scalar(select(UserNameRow.name).where(UserNameRow.user_id == user.id)
                       .order_by(UserNameRow.until_ms.desc(), UserNameRow.id.desc()).limit(1))
    if former is not None:
        try:
            _name_free(db, former, user.id)
            name = former
        except AccountError:
            pass  # another player's now: the neutral name stays, the player may choose another
    row.login, row.password_hash, row.name, row.name_key = user.login, closed.password_hash, name, name_key(name)
    db.delete(closed)
    return User(user.id, user.login, name)


def _name_taken(name: str) -> AccountError:
    return AccountError("name_taken", f"the name {name!r} is another player's", 409)


def _taken(exc: IntegrityError, user: User) -> AccountError:
    """What a unique index refused, said as the check before it would have (the other sign-up came first)."""
    said = str(exc.orig or exc).lower()
    if "name_key" in said:
        return _name_taken(user.name)
    return AccountError("login_taken", f"the login name {user.login!r} is taken", 409)


def _end_sessions(db: Session, user_id: str, keep: str | None) -> list[str]:
    """Delete the account's sessions but ``keep`` (a token hash); returns the hashes deleted."""
    hashes = [h for h in db.scalars(select(AuthSessionRow.token_hash).where(AuthSessionRow.user_id == user_id))
              if h != keep]
    if hashes:
        db.execute(delete(AuthSessionRow).where(AuthSessionRow.token_hash.in_(hashes)))
    return hashes


class AccountRows:
    """The statements of the accounts service, each call a session (or one short transaction) of its own:
    run them on a thread, never on the event loop. ``by_login`` and ``by_address`` count the failed
    sign-ins; their wall clock dates what outlives a restart (reserved logins, failures)."""

    def __init__(self, store: Store, by_login: RateLimiter, by_address: RateLimiter) -> None:
        self.store = store
        self.by_login = by_login
        self.by_address = by_address
        self._swept_ms = 0


    def name_free(self, name: str, user_id: str | None = None) -> None:
        """Refuse a display name another account (than ``user_id``) has."""
        with Session(self.store.engine) as db:
            _name_free(db, name, user_id)

    def login_free(self, login: str) -> None:
        with Session(self.store.engine) as db:
            _login_free(db, login, self.wall_ms())

    def wall_ms(self) -> int:
        return int(self.by_login.now() * 1000)

    def insert_user(self, user: User, digest: str, browser: str | None, address: str = "?") -> None:
        now = now_ms()
        try:
            with Session(self.store.engine) as db, db.begin():
                _login_free(db, user.login, self.wall_ms())
                _name_free(db, user.name, user.id)
                db.add(UserRow(id=user.id, login=user.login, name=user.name, name_key=name_key(user.name),
                               password_hash=digest, created_ms=now))
                db.flush()
                if browser:
                    # the solo statistics of this browser now belong to the account
                    db.merge(UserBrowserRow(browser_id=browser, user_id=user.id, linked_ms=now))
                add_traces(db.connection(), user.id, _traces(browser, address), now)
        except IntegrityError as exc:  # a sign-up of the same login or name committed in between
            raise _taken(exc, user) from None

    def before_hash(self, login: str, login_key: str, address_key: str,
                     browser: str | None) -> tuple[int, tuple[User, str] | None, int]:
        """What is known before the hash, in one database session: the seconds to wait (0: none), the
        account and its hash, and the try's rank in the queue (0: a browser the account has signed in
        on; else 1 and the address's failures in the window)."""
        with Session(self.store.engine) as db:
            failed = self.by_address.recent(db, address_key)
            wait = max(self.by_login.wait_after(self.by_login.recent(db, login_key)),
                       self.by_address.wait_after(failed))
            if wait:
                return wait, None, 0
            row = db.scalar(select(UserRow).where(UserRow.login == login))
            if row is None:  # a closed account its player may reopen: the login and the password it had
                closed = _reserved(db, login, self.wall_ms())
                if closed is None or not closed.password_hash:
                    return 0, None, 1 + len(failed)
                # no name yet: the account is reopened once the password is right (_signed_in)
                return 0, (User(closed.user_id, login, ""), closed.password_hash), 1 + len(failed)
            known = browser is not None and db.scalar(select(UserBrowserRow.user_id).where(
                UserBrowserRow.browser_id == browser)) == row.id
            return 0, (User(row.id, row.login, row.name), row.password_hash), 0 if known else 1 + len(failed)

    def failed(self, login_key: str, address_key: str) -> None:
        """Count a failure against both keys in one short transaction; the rows past the windows are
        swept at most once a minute (a write fewer for every guess of a storm)."""
        now = self.by_login._ms(self.by_login.now())
        with Session(self.store.engine) as db, db.begin():
            if now - self._swept_ms >= 60_000:
                window = max(self.by_login.window, self.by_address.window)
                db.execute(delete(SigninFailureRow).where(SigninFailureRow.at_ms <= now - self.by_login._ms(window)))
                self._swept_ms = now
            db.add_all([SigninFailureRow(key_hash=RateLimiter._key(login_key), at_ms=now),
                        SigninFailureRow(key_hash=RateLimiter._key(address_key), at_ms=now)])

    def signed_in(self, user: User, login_key: str, browser: str | None, rehashed: str | None,
                   old_token: str | None, address: str = "?") -> User:
        """Note a sign-in (and reopen the account if it was closed, and leave the ladder's traces of the
        browser and the address); the user signed in."""
        self.by_login.forget(login_key)
        now = now_ms()
        with Session(self.store.engine) as db, db.begin():
            if not user.name:
                user = _reopen(db, user)
            if rehashed is not None:
                db.get(UserRow, user.id).password_hash = rehashed  # type: ignore[union-attr]
            if browser and db.get(UserBrowserRow, browser) is None:
                db.add(UserBrowserRow(browser_id=browser, user_id=user.id, linked_ms=now))
            add_traces(db.connection(), user.id, _traces(browser, address), now)
            if old_token:  # a new session at every sign-in: a token known before it opens nothing
                db.execute(delete(AuthSessionRow).where(AuthSessionRow.token_hash == token_hash(old_token)))
        return user

    def new_session(self, user_id: str, agent: str | None = None) -> str:
        token = secrets.token_urlsafe(32)
        now = now_ms()
        with Session(self.store.engine) as db, db.begin():
            db.add(AuthSessionRow(token_hash=token_hash(token), user_id=user_id, created_ms=now,
                                  expires_ms=now + SESSION_DAYS * 86_400_000, browser=browser_label(agent),
                                  seen_ms=now))
        return token

    def sign_out(self, token: str | None) -> None:
        if not token:
            return
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(AuthSessionRow).where(AuthSessionRow.token_hash == token_hash(token)))

    def user_for(self, token: str | None) -> User | None:
        """The user a session token belongs to, if the session is still open."""
        if not token or len(token) > 100:
            return None
        key = token_hash(token)
        with Session(self.store.engine) as db:
            row = db.execute(select(UserRow.id, UserRow.login, UserRow.name, AuthSessionRow.expires_ms,
                                    AuthSessionRow.seen_ms)
                             .join(AuthSessionRow, AuthSessionRow.user_id == UserRow.id)
                             .where(AuthSessionRow.token_hash == key)).first()
        now = now_ms()
        if row is None or row.expires_ms < now:
            return None
        if (row.seen_ms or 0) < now - SEEN_EVERY_MS:  # "last seen" of the account page, a write every few minutes
            with Session(self.store.engine) as db, db.begin():
                db.execute(update(AuthSessionRow).where(AuthSessionRow.token_hash == key).values(seen_ms=now))
        return User(row.id, row.login, row.name)

    def rename(self, user_id: str, name: str) -> User:
        """Give the account the display name ``name`` (cleaned: :func:`patience.server.accounts.service.clean_name`);
        the one it had is kept for moderators (``user_names``)."""
        display = name
        try:
            with Session(self.store.engine) as db, db.begin():
                row = db.get(UserRow, user_id)
                if row is None:
                    raise AccountError("no_user", "no such account", 404)
                _name_free(db, display, user_id)
                if row.name != display:
                    db.add(UserNameRow(user_id=row.id, name=row.name, until_ms=now_ms()))
                row.name, row.name_key = display, name_key(display)
                user = User(row.id, row.login, row.name)
        except IntegrityError:  # another account took the name in between
            raise _name_taken(display) from None
        return user

    def user(self, user_id: str) -> User | None:
        with Session(self.store.engine) as db:
            row = db.get(UserRow, user_id)
            return None if row is None else User(row.id, row.login, row.name)

    def browsers(self, user_id: str) -> list[str]:
        with Session(self.store.engine) as db:
            return list(db.scalars(select(UserBrowserRow.browser_id).where(UserBrowserRow.user_id == user_id)))

    def hash_of(self, user_id: str) -> str | None:
        with Session(self.store.engine) as db:
            return db.scalar(select(UserRow.password_hash).where(UserRow.id == user_id))

    def set_password(self, user_id: str, digest: str, keep: str | None) -> list[str]:
        with Session(self.store.engine) as db, db.begin():
            db.execute(update(UserRow).where(UserRow.id == user_id).values(password_hash=digest))
            db.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == user_id))
            return _end_sessions(db, user_id, keep)

    def sessions(self, user_id: str, token: str | None) -> list[dict[str, Any]]:
        """The account's open sessions, the newest first: an id (the start of the token's hash: it opens
        nothing), the browser, when signed in and last seen, and which one is this browser's."""
        mine = token_hash(token) if token else ""
        now = now_ms()
        with Session(self.store.engine) as db:
            rows = db.scalars(select(AuthSessionRow).where(AuthSessionRow.user_id == user_id,
                                                           AuthSessionRow.expires_ms >= now)
                              .order_by(AuthSessionRow.created_ms.desc()))
            return [{"id": row.token_hash[:SESSION_ID], "browser": row.browser or "", "created_ms": row.created_ms,
                     "seen_ms": row.seen_ms or row.created_ms, "current": row.token_hash == mine} for row in rows]

    def end_one(self, user_id: str, session_id: str) -> list[str]:
        with Session(self.store.engine) as db, db.begin():
            hashes = [h for h in db.scalars(select(AuthSessionRow.token_hash).where(AuthSessionRow.user_id == user_id))
                      if h.startswith(session_id)]
            if hashes:
                db.execute(delete(AuthSessionRow).where(AuthSessionRow.token_hash.in_(hashes)))
            return hashes

    def former_names(self, user_id: str) -> list[tuple[str, int]]:
        """The display names the account had and until when (ms), the oldest first: for moderators."""
        with Session(self.store.engine) as db:
            return [(name, until) for name, until in db.execute(
                select(UserNameRow.name, UserNameRow.until_ms).where(UserNameRow.user_id == user_id)
                .order_by(UserNameRow.until_ms, UserNameRow.id))]

    def email_of(self, user_id: str) -> str | None:
        with Session(self.store.engine) as db:
            return db.scalar(select(UserRow.email).where(UserRow.id == user_id))

    def store_email(self, user_id: str, email: str | None) -> None:
        with Session(self.store.engine) as db, db.begin():
            db.execute(update(UserRow).where(UserRow.id == user_id).values(email=email))
            db.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == user_id))

    def close(self, user_id: str) -> list[str]:
        from patience.server.storage.roles import close_user

        with Session(self.store.engine) as db, db.begin():
            row = db.get(UserRow, user_id)
            return [] if row is None else close_user(db, row, reopenable=True, at_ms=self.wall_ms())

    def reset_target(self, who: str) -> tuple[str, str] | None:
        with Session(self.store.engine) as db:
            if "@" in who:
                local, _, domain = who.rpartition("@")
                row = db.execute(select(UserRow.id, UserRow.email).where(
                    UserRow.email == f"{local}@{domain.lower()}").limit(1)).first()
            else:
                row = db.execute(select(UserRow.id, UserRow.email).where(UserRow.login == who.lower())).first()
        if row is None or not row.email:
            return None
        return row.id, row.email

    def store_reset(self, user_id: str, token: str) -> None:
        now = now_ms()
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(PasswordResetRow).where(PasswordResetRow.expires_ms < now))
            db.add(PasswordResetRow(token_hash=token_hash(token), user_id=user_id, made_ms=now,
                                    expires_ms=now + RESET_MINUTES * 60_000))

    def reset_user(self, token: str) -> str | None:
        with Session(self.store.engine) as db:
            row = db.get(PasswordResetRow, token_hash(token))
            return None if row is None or row.expires_ms < now_ms() else row.user_id

    def use_reset(self, token: str, digest: str) -> list[str] | None:
        with Session(self.store.engine) as db, db.begin():
            row = db.get(PasswordResetRow, token_hash(token))
            if row is None or row.expires_ms < now_ms():
                return None
            user_id = row.user_id
            done = db.execute(delete(PasswordResetRow).where(PasswordResetRow.token_hash == row.token_hash))
            if done.rowcount != 1:  # type: ignore[attr-defined]
                return None
            db.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == user_id))
            db.execute(update(UserRow).where(UserRow.id == user_id).values(password_hash=digest))
            return _end_sessions(db, user_id, None)
