"""Accounts: sign up, sign in, sign out and the display name, with the safeguards they need.

- Passwords are kept only as argon2id hashes (argon2-cffi), rehashed when the parameters change.
- A signed-in browser holds a random session token in an HttpOnly, SameSite=Lax cookie (Secure
  over HTTPS); the database keeps only the token's SHA-256, so a leaked table opens no session.
- Every form post carries a CSRF token: an HMAC of the browser's id under a server secret kept in
  the database (so tokens outlive a restart). A post from another site has neither.
- Failed sign-ins are counted per login name and per address, in the database (a restart does not
  forget them); past the limit, sign-in answers 429 with the seconds to wait, without looking at
  the password.
- The browser's solo games count for the account: the browser is linked at sign-up (and at
  sign-in, if no account has it yet).

The HTTP side (forms, cookies) is :mod:`patience.server.web.accounts`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from patience.server.storage.store import AuthSessionRow, SecretRow, SigninFailureRow, Store, UserBrowserRow, UserRow

__all__ = ["SESSION_DAYS", "AccountError", "Accounts", "RateLimiter", "User"]

SESSION_DAYS = 30
LOGIN = re.compile(r"^[a-z0-9][a-z0-9_.-]{2,31}$")
MIN_PASSWORD = 8
MAX_PASSWORD = 256
MAX_NAME = 40


class AccountError(ValueError):
    """A sign-up or sign-in that cannot be done: ``code`` for programs (and translations), the text for people."""

    def __init__(self, code: str, message: str, status: int = 400, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class User:
    id: str
    login: str
    name: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "login": self.login, "name": self.name}


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

    def wait(self, key: str) -> int:
        """Seconds until ``key`` may try again (0: now)."""
        now = self.now()
        edge = self._ms(now - self.window)
        with Session(self.store.engine) as db:
            times = list(db.scalars(select(SigninFailureRow.at_ms)
                                    .where(SigninFailureRow.key_hash == self._key(key), SigninFailureRow.at_ms > edge)
                                    .order_by(SigninFailureRow.at_ms.desc()).limit(self.limit)))
        if len(times) < self.limit:
            return 0
        # the oldest of the last ``limit`` failures must leave the window
        return max(1, int(times[-1] / 1000 + self.window - now + 0.999))

    def fail(self, key: str) -> None:
        now = self._ms(self.now())
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(SigninFailureRow).where(SigninFailureRow.at_ms <= now - self._ms(self.window)))
            db.add(SigninFailureRow(key_hash=self._key(key), at_ms=now))

    def forget(self, key: str) -> None:
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(SigninFailureRow).where(SigninFailureRow.key_hash == self._key(key)))


def clean_name(name: str) -> str:
    """A display name: trimmed, inner spaces folded, 1..40 printable characters."""
    text = " ".join(str(name).split())
    if not text or len(text) > MAX_NAME or not text.isprintable() or any(c in text for c in "<>"):
        raise AccountError("bad_name", f"a name is 1 to {MAX_NAME} characters (no < or >)")
    return text


def _now_ms() -> int:
    return int(time.time() * 1000)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Accounts:
    """Users, their sessions and browsers in the store; the CSRF key; the sign-in rate limits."""

    def __init__(self, store: Store, *, now: Callable[[], float] = time.time,
                 hasher: PasswordHasher | None = None, login_limit: int = 5, address_limit: int = 20,
                 window: float = 300.0) -> None:
        self.store = store
        self.hasher = hasher or PasswordHasher()
        # ``now`` is a wall clock: the failures are kept across restarts
        self.by_login = RateLimiter(store, login_limit, window, now)
        self.by_address = RateLimiter(store, address_limit, window, now)
        self._csrf_key: bytes | None = None
        # a hash to check against when the login is unknown, so that the answer takes as long
        self._dummy = self.hasher.hash(secrets.token_hex(8))

    # -- CSRF --------------------------------------------------------------------------------

    def csrf_key(self) -> bytes:
        if self._csrf_key is None:
            with Session(self.store.engine) as db, db.begin():
                row = db.get(SecretRow, "csrf")
                if row is None:
                    row = SecretRow(name="csrf", value=secrets.token_hex(32))
                    db.add(row)
                value = row.value
            self._csrf_key = bytes.fromhex(value)
        return self._csrf_key

    def csrf_token(self, browser: str) -> str:
        return hmac.new(self.csrf_key(), f"csrf|{browser}".encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, browser: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(self.csrf_token(browser), str(token))

    # -- accounts ----------------------------------------------------------------------------

    def sign_up(self, login: str, name: str, password: str, browser: str | None) -> tuple[User, str]:
        """A new account, signed in: the user and the session token for the cookie."""
        login = str(login).strip().lower()
        if not LOGIN.match(login):
            raise AccountError("bad_login", "a login name is 3 to 32 letters, digits, '.', '_' or '-'")
        display = clean_name(name or login)
        if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise AccountError("bad_password", f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters")
        digest = self.hasher.hash(password)
        user = User(secrets.token_urlsafe(12), login, display)
        now = _now_ms()
        with Session(self.store.engine) as db, db.begin():
            if db.scalar(select(UserRow.id).where(UserRow.login == login)) is not None:
                raise AccountError("login_taken", f"the login name {login!r} is taken", 409)
            db.add(UserRow(id=user.id, login=login, name=display, password_hash=digest, created_ms=now))
            db.flush()
            if browser:
                # the solo statistics of this browser now belong to the account
                db.merge(UserBrowserRow(browser_id=browser, user_id=user.id, linked_ms=now))
        return user, self._new_session(user.id)

    def sign_in(self, login: str, password: str, browser: str | None, address: str) -> tuple[User, str]:
        """Check the password (under the rate limits) and open a session."""
        login = str(login).strip().lower()
        wait = max(self.by_login.wait(f"login:{login}"), self.by_address.wait(f"addr:{address}"))
        if wait:
            raise AccountError("rate_limited", f"too many failed sign-ins: try again in {wait} s", 429, wait)
        with Session(self.store.engine) as db:
            row = db.scalar(select(UserRow).where(UserRow.login == login))
            stored = row.password_hash if row is not None else self._dummy
            try:
                self.hasher.verify(stored, password)
                ok = row is not None
            except (VerificationError, InvalidHashError):
                ok = False
            if not ok or row is None:
                self.by_login.fail(f"login:{login}")
                self.by_address.fail(f"addr:{address}")
                raise AccountError("wrong_password", "wrong login name or password", 401)
            user = User(row.id, row.login, row.name)
            needs_rehash = self.hasher.check_needs_rehash(stored)
        self.by_login.forget(f"login:{login}")
        now = _now_ms()
        with Session(self.store.engine) as db, db.begin():
            if needs_rehash:
                db.get(UserRow, user.id).password_hash = self.hasher.hash(password)  # type: ignore[union-attr]
            if browser and db.get(UserBrowserRow, browser) is None:
                db.add(UserBrowserRow(browser_id=browser, user_id=user.id, linked_ms=now))
        return user, self._new_session(user.id)

    def _new_session(self, user_id: str) -> str:
        token = secrets.token_urlsafe(32)
        now = _now_ms()
        with Session(self.store.engine) as db, db.begin():
            db.add(AuthSessionRow(token_hash=_token_hash(token), user_id=user_id, created_ms=now,
                                  expires_ms=now + SESSION_DAYS * 86_400_000))
        return token

    def sign_out(self, token: str | None) -> None:
        if not token:
            return
        with Session(self.store.engine) as db, db.begin():
            db.execute(delete(AuthSessionRow).where(AuthSessionRow.token_hash == _token_hash(token)))

    def user_for(self, token: str | None) -> User | None:
        """The user a session token belongs to, if the session is still open."""
        if not token or len(token) > 100:
            return None
        with Session(self.store.engine) as db:
            row = db.execute(select(UserRow.id, UserRow.login, UserRow.name, AuthSessionRow.expires_ms)
                             .join(AuthSessionRow, AuthSessionRow.user_id == UserRow.id)
                             .where(AuthSessionRow.token_hash == _token_hash(token))).first()
        if row is None or row.expires_ms < _now_ms():
            return None
        return User(row.id, row.login, row.name)

    def rename(self, user_id: str, name: str) -> User:
        display = clean_name(name)
        with Session(self.store.engine) as db, db.begin():
            row = db.get(UserRow, user_id)
            if row is None:
                raise AccountError("no_user", "no such account", 404)
            row.name = display
            return User(row.id, row.login, row.name)

    def user(self, user_id: str) -> User | None:
        with Session(self.store.engine) as db:
            row = db.get(UserRow, user_id)
            return None if row is None else User(row.id, row.login, row.name)

    def browsers(self, user_id: str) -> list[str]:
        with Session(self.store.engine) as db:
            return list(db.scalars(select(UserBrowserRow.browser_id).where(UserBrowserRow.user_id == user_id)))
