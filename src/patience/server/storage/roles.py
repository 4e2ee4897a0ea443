"""What ``patience admin`` reads and changes: accounts and their roles, the deal stock, the schema version.

Roles (``moderator``, ``admin``) are rows of ``user_roles`` (migration 0012). Closing an account
takes away what signs it in (its login name becomes ``~`` and its id, which no login can be, and its
password hash is emptied, which no password matches), forgets its e-mail address and reset links, gives
it a neutral display name (in the records of its finished matches too), ends its sessions and drops
its roles and open challenge; its games and matches stay (for the opponents' histories), and so does
the list of names it had (``user_names``, for moderators). The player closes it on the account page
(:meth:`patience.server.accounts.Accounts.close`), an admin with ``patience admin close``. Its login name
stays reserved for :data:`RESERVED_DAYS` (``closed_logins``): nobody may sign up with it, and the player
who closed it reopens it by signing in with it and the password it had; one an admin or a moderator
closed is not reopened.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import cast

from sqlalchemy import BigInteger, ForeignKey, Index, String, delete, func, or_, select, update
from sqlalchemy.orm import Mapped, Session, mapped_column

from patience.errors import PatienceError
from patience.server.storage.store import (
    AuthSessionRow,
    Base,
    ChallengeRow,
    DealStockRow,
    MatchRow,
    PasswordResetRow,
    Store,
    UserNameRow,
    UserRow,
    name_key,
    now_ms,
)

__all__ = ["ADMIN_ACTIONS", "RESERVED_DAYS", "ROLES", "Account", "AdminError", "ClosedLoginRow", "RoleRow",
           "close_account", "close_user", "closed_name", "find_accounts", "grant", "is_closed_name",
           "name_history", "revoke", "run_admin", "schema_version", "shown_name", "stock"]

ROLES = ("moderator", "admin")
CLOSED_PREFIX = "~"  # a login name that begins so cannot be typed at sign-in (accounts.LOGIN)


class AdminError(PatienceError):
    """Bad input to an admin command: one line, exit code 2."""


RESERVED_DAYS = 30
"""Days a closed account's login name stays reserved: nobody may sign up with it meanwhile, and an
account its player closed is reopened by signing in with it and the password it had."""


class ClosedLoginRow(Base):
    """The login name of a closed account, reserved for :data:`RESERVED_DAYS` (migration 0017); with the
    password hash it had when its player closed it (empty when an admin or a moderator closed it: no
    password reopens it then). Deleted when the account is reopened, or when the time is up."""

    __tablename__ = "closed_logins"

    login: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(24), ForeignKey("users.id", ondelete="CASCADE"))
    closed_ms: Mapped[int] = mapped_column(BigInteger)
    password_hash: Mapped[str] = mapped_column(String(200))

    __table_args__ = (Index("ix_closed_logins_user", "user_id"),)



class RoleRow(Base):
    """A role of an account (migration 0012)."""

    __tablename__ = "user_roles"

    user_id: Mapped[str] = mapped_column(String(24), ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    role: Mapped[str] = mapped_column(String(16), primary_key=True)
    granted_ms: Mapped[int] = mapped_column(BigInteger)


@dataclass(frozen=True)
class Account:
    id: str
    login: str
    name: str
    created_ms: int
    roles: tuple[str, ...]

    @property
    def closed(self) -> bool:
        return self.login.startswith(CLOSED_PREFIX)


def find_accounts(store: Store, text: str | None = None, *, limit: int = 1000) -> list[Account]:
    """Accounts whose login or display name contains ``text`` (any case), oldest first."""
    query = select(UserRow).order_by(UserRow.created_ms, UserRow.id).limit(limit)
    if text:
        pattern = "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(or_(func.lower(UserRow.login).like(pattern, escape="\\"),
                                func.lower(UserRow.name).like(pattern, escape="\\")))
    with Session(store.engine) as db:
        rows = db.scalars(query).all()
        roles: dict[str, list[str]] = {}
        if rows:
            for user_id, role in db.execute(select(RoleRow.user_id, RoleRow.role)
                                            .where(RoleRow.user_id.in_([r.id for r in rows]))
                                            .order_by(RoleRow.role)):
                roles.setdefault(user_id, []).append(role)
        return [Account(r.id, r.login, r.name, r.created_ms, tuple(roles.get(r.id, ()))) for r in rows]


def _user(db: Session, login: str) -> UserRow:
    row = db.scalar(select(UserRow).where(UserRow.login == login.strip().lower()))
    if row is None or row.login.startswith(CLOSED_PREFIX):
        raise AdminError(f"no account with the login name {login!r}")
    return row


def _role(role: str) -> str:
    if role not in ROLES:
        raise AdminError(f"unknown role {role!r}: the roles are {', '.join(ROLES)}")
    return role


def grant(store: Store, login: str, role: str) -> bool:
    """Give ``login`` the role; False when it had it already."""
    role = _role(role)
    with Session(store.engine) as db, db.begin():
        user = _user(db, login)
        if db.get(RoleRow, (user.id, role)) is not None:
            return False
        db.add(RoleRow(user_id=user.id, role=role, granted_ms=now_ms()))
        return True


def revoke(store: Store, login: str, role: str) -> bool:
    """Take the role from ``login``; False when it did not have it."""
    role = _role(role)
    with Session(store.engine) as db, db.begin():
        user = _user(db, login)
        done = db.execute(delete(RoleRow).where(RoleRow.user_id == user.id, RoleRow.role == role))
        return bool(done.rowcount)  # type: ignore[attr-defined]


_CLOSED_NAME = re.compile(r"<closed:([A-Za-z0-9_-]{1,24})>")


def closed_name(user_id: str) -> str:
    """The neutral display name of a closed account: a mark in no language, ``<closed:`` and the first 8
    characters of its id and ``>`` (no display name can be one: a name has no ``<`` or ``>``). It goes out
    as it is, in every answer that names players; the pages write it in their language (``playerName`` in
    ``web/js/i18n.js``: "Geschlossenes Konto 1a2B3c4D"), ``patience admin`` in English (:func:`shown_name`).

    >>> closed_name("1a2B3c4D5e6F7g8H"), is_closed_name("<closed:1a2B3c4D>"), is_closed_name("Closed")
    ('<closed:1a2B3c4D>', True, False)
    """
    return f"<closed:{user_id[:8]}>"


def is_closed_name(name: str) -> bool:
    """Whether ``name`` is a closed account's neutral name (:func:`closed_name`)."""
    return _CLOSED_NAME.fullmatch(name) is not None


def shown_name(name: str) -> str:
    """A display name as English text shows it (``patience admin``): a closed account's as "Closed account
    1a2B3c4D".

    >>> shown_name("<closed:1a2B3c4D>"), shown_name("Gina")
    ('Closed account 1a2B3c4D', 'Gina')
    """
    found = _CLOSED_NAME.fullmatch(name)
    return f"Closed account {found.group(1)}" if found else name


def close_user(db: Session, user: UserRow, *, reopenable: bool = False, at_ms: int | None = None) -> list[str]:
    """Close ``user`` in the transaction of ``db`` (see the module's text); returns the hashes of the
    sessions it ended (every process must forget them). Its login name stays reserved for
    :data:`RESERVED_DAYS`; with ``reopenable`` (its player closes it) its password reopens it meanwhile."""
    name = closed_name(user.id)
    if not user.login.startswith(CLOSED_PREFIX):
        db.execute(delete(ClosedLoginRow).where(ClosedLoginRow.login == user.login))  # one whose time is up
        db.add(ClosedLoginRow(login=user.login, user_id=user.id, closed_ms=now_ms() if at_ms is None else at_ms,
                              password_hash=user.password_hash if reopenable else ""))
    sessions = list(db.scalars(select(AuthSessionRow.token_hash).where(AuthSessionRow.user_id == user.id)))
    db.execute(delete(AuthSessionRow).where(AuthSessionRow.user_id == user.id))
    db.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == user.id))
    db.execute(delete(RoleRow).where(RoleRow.user_id == user.id))
    db.execute(delete(ChallengeRow).where(ChallengeRow.user_id == user.id))
    if user.name != name:
        db.add(UserNameRow(user_id=user.id, name=user.name, until_ms=now_ms()))
    db.execute(update(UserRow).where(UserRow.id == user.id).values(
        login=f"{CLOSED_PREFIX}{user.id}", password_hash="", name=name, name_key=name_key(name),
        renamed_from=None, email=None))
    # the records of its finished matches name their players: the neutral name there too
    for match_id, text in db.execute(select(MatchRow.id, MatchRow.record).where(
            or_(MatchRow.player_a == user.id, MatchRow.player_b == user.id), MatchRow.record.is_not(None))):
        record = json.loads(cast(str, text))  # (the query keeps the matches with a record)
        for player in record.get("players", []):
            if player.get("id") == user.id:
                player["name"] = name
        db.execute(update(MatchRow).where(MatchRow.id == match_id).values(record=json.dumps(record)))
    return sessions


def close_account(store: Store, login: str, *, at_ms: int | None = None) -> Account:
    """Close the account (see the module's text); its games and matches stay, its login is kept (from
    ``at_ms``, by default now) but no password reopens it. Returns it as it is now."""
    with Session(store.engine) as db, db.begin():
        user = _user(db, login)
        close_user(db, user, at_ms=at_ms)
        return Account(user.id, f"{CLOSED_PREFIX}{user.id}", closed_name(user.id), user.created_ms, ())


def name_history(store: Store, text: str) -> list[tuple[Account, list[tuple[str, int]]]]:
    """For moderators: the accounts whose login, display name or a former display name is ``text`` (any
    case), each with the names it gave up and until when (ms), the oldest first."""
    text = text.strip()
    with Session(store.engine) as db:
        ids = set(db.scalars(select(UserRow.id).where(or_(UserRow.login == text.lower(),
                                                           UserRow.name_key == name_key(text), UserRow.id == text))))
        ids |= {user_id for user_id, name in db.execute(select(UserNameRow.user_id, UserNameRow.name))
                if name_key(name) == name_key(text)}
        out = []
        for row in db.scalars(select(UserRow).where(UserRow.id.in_(ids)).order_by(UserRow.created_ms)):
            history = [(name, until) for name, until in db.execute(
                select(UserNameRow.name, UserNameRow.until_ms).where(UserNameRow.user_id == row.id)
                .order_by(UserNameRow.until_ms, UserNameRow.id))]
            out.append((Account(row.id, row.login, row.name, row.created_ms, ()), history))
        return out


def stock(store: Store) -> dict[str, int]:
    """The deal stock: deals proved winnable waiting, per duel variant (``GAME/VARIANT``)."""
    with Session(store.engine) as db:
        rows = db.execute(select(DealStockRow.variant, func.count()).group_by(DealStockRow.variant)
                          .order_by(DealStockRow.variant)).all()
    return {variant: int(count) for variant, count in rows}


def schema_version(store: Store) -> tuple[str | None, str]:
    """The database's schema version and the newest this package knows."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    from patience.server.storage.store import alembic_config

    head = ScriptDirectory.from_config(alembic_config(store.url)).get_current_head() or ""
    with store.engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision(), head


ADMIN_ACTIONS: dict[str, tuple[str, ...]] = {"users": ("find",), "grant": ("login", "role"),
                                             "revoke": ("login", "role"), "close": ("login",), "names": ("name",),
                                             "stock": (), "schema": ()}
"""The actions of ``patience admin`` and the arguments each takes (``find`` may be None)."""


def run_admin(store: Store, action: str, args: dict[str, str | None]) -> list[str]:
    """Do the ``patience admin`` ``action`` with ``args`` (see :data:`ADMIN_ACTIONS`) on ``store``; the lines
    it prints. Run by the command on the database, or by the ``patience serve`` that holds an SQLite file
    for itself when the command asks it (:mod:`patience.server.storage.backups`)."""
    import datetime

    if action not in ADMIN_ACTIONS or set(args) != set(ADMIN_ACTIONS[action]) \
            or not all(isinstance(v, str) or (k == "find" and v is None) for k, v in args.items()):
        raise AdminError(f"no admin action {action!r} with {sorted(args)}")
    out: list[str] = []
    if action == "users":
        found = find_accounts(store, args["find"])
        for account in found:
            created = datetime.datetime.fromtimestamp(account.created_ms / 1000, datetime.UTC)
            out.append(f"{account.login}\t{shown_name(account.name)}\t{created:%Y-%m-%d %H:%M}Z\t"
                       f"{','.join(account.roles) or '-'}")
        if not found:
            out.append("no account" + (f" matches {args['find']!r}" if args["find"] else ""))
    elif action in ("grant", "revoke"):
        login, role = str(args["login"]), str(args["role"])
        changed = (grant if action == "grant" else revoke)(store, login, role)
        login = login.strip().lower()
        if action == "grant":
            out.append(f"{login} is {role}" + ("" if changed else " already"))
        else:
            out.append(f"{login} is no longer {role}" if changed else f"{login} was not {role}")
    elif action == "close":
        account = close_account(store, str(args["login"]))
        out.append(f"closed {str(args['login']).strip().lower()}: now {shown_name(account.name)!r}, it cannot sign in")
    elif action == "names":
        history_of = name_history(store, str(args["name"]))
        for account, history in history_of:
            out.append(f"{account.login}\t{shown_name(account.name)}\t(now)")
            for name, until_ms in history:
                until = datetime.datetime.fromtimestamp(until_ms / 1000, datetime.UTC)
                out.append(f"{account.login}\t{name}\tuntil {until:%Y-%m-%d %H:%M}Z")
        if not history_of:
            out.append(f"no account has or had the name {args['name']!r}")
    elif action == "stock":
        counts = stock(store)
        out += [f"{variant}\t{count}" for variant, count in counts.items()]
        if not counts:
            out.append("the deal stock is empty")
    else:
        version, head = schema_version(store)
        state = "up to date" if version == head else f"newest is {head}: patience serve migrates it"
        out.append(f"schema {version or 'none'} ({state})")
    return out
