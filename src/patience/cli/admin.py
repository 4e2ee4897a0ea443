"""``patience admin``: look after the site's database from the command line.

``users [--find TEXT]`` lists accounts, ``grant``/``revoke LOGIN ROLE`` change roles (``moderator``,
``admin``), ``close LOGIN`` closes an account, ``names NAME`` shows the display names an account had
(for moderators: found by login, display name or any former name), ``stock`` shows the deal stock per duel variant and
``schema`` the database's schema version. The database is that of ``patience serve``: ``--database-url``,
``$PATIENCE_DATABASE_URL``, or the SQLite file in the data folder.
"""

from __future__ import annotations

import argparse
import datetime
import os
from pathlib import Path
from typing import TYPE_CHECKING

from patience.errors import BadInputError

if TYPE_CHECKING:
    from patience.server.storage.store import Store

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("admin", help="look after the site: accounts, roles, the deal stock, the schema")
    p.add_argument("--database-url", default=None, metavar="URL",
                   help="the database, as for patience serve (default: $PATIENCE_DATABASE_URL if set, "
                        "else the SQLite file in --data-dir)")
    p.add_argument("--data-dir", type=Path, default=None, help="folder of the database file (as for patience serve)")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    users = actions.add_parser("users", help="list accounts (login, name, created, roles)")
    users.add_argument("--find", metavar="TEXT", default=None, help="only those whose login or name contains TEXT")
    for name, text in (("grant", "give an account a role"), ("revoke", "take a role from an account")):
        q = actions.add_parser(name, help=text)
        q.add_argument("login")
        q.add_argument("role", help="moderator or admin")
    close = actions.add_parser("close", help="close an account: it cannot sign in, its name is replaced, "
                                              "its matches stay, its sessions end")
    close.add_argument("login")
    names = actions.add_parser("names", help="the display names an account had (found by its login, its name or "
                                             "a name it had), for moderators")
    names.add_argument("name")
    actions.add_parser("stock", help="the deal stock: deals proved winnable waiting per duel variant")
    actions.add_parser("schema", help="the database's schema version")
    p.set_defaults(func=cmd_admin, admin_parser=p)


def cmd_admin(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from patience.server.storage.store import StoreError

    if not args.action:
        args.admin_parser.print_usage()
        raise BadInputError("admin needs an action: users, grant, revoke, close, names, stock or schema")
    store = _store(args)
    try:
        store.ping()
        return _run(args, store)
    except SQLAlchemyError as exc:
        said = str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__]
        raise StoreError(f"the database cannot answer: {said[0]} (is its schema up to date? "
                         "patience serve migrates it)") from None
    finally:
        store.close()


def _store(args: argparse.Namespace) -> Store:
    from patience.cli.serve import DATABASE_URL_ENV
    from patience.server.app import DB_FILE, default_data_dir
    from patience.server.storage.store import Store, sqlite_url

    url = args.database_url or os.environ.get(DATABASE_URL_ENV) or None
    if url is None:
        path = Path(args.data_dir if args.data_dir is not None else default_data_dir()) / DB_FILE
        if not path.exists():
            raise BadInputError(f"no database at {path} (name one with --database-url or --data-dir)")
        url = sqlite_url(path)
    return Store(url)


def _run(args: argparse.Namespace, store: Store) -> int:
    from patience.server.storage import roles

    if args.action == "users":
        found = roles.find_accounts(store, args.find)
        for account in found:
            created = datetime.datetime.fromtimestamp(account.created_ms / 1000, datetime.UTC)
            print(f"{account.login}\t{account.name}\t{created:%Y-%m-%d %H:%M}Z\t{','.join(account.roles) or '-'}")
        if not found:
            print("no account" + (f" matches {args.find!r}" if args.find else ""))
    elif args.action in ("grant", "revoke"):
        changed = (roles.grant if args.action == "grant" else roles.revoke)(store, args.login, args.role)
        login = args.login.strip().lower()
        if args.action == "grant":
            print(f"{login} is {args.role}" + ("" if changed else " already"))
        else:
            print(f"{login} is no longer {args.role}" if changed else f"{login} was not {args.role}")
    elif args.action == "close":
        account = roles.close_account(store, args.login)
        print(f"closed {args.login.strip().lower()}: now {account.name!r}, it cannot sign in")
    elif args.action == "names":
        found = roles.name_history(store, args.name)
        for account, history in found:
            print(f"{account.login}\t{account.name}\t(now)")
            for name, until_ms in history:
                until = datetime.datetime.fromtimestamp(until_ms / 1000, datetime.UTC)
                print(f"{account.login}\t{name}\tuntil {until:%Y-%m-%d %H:%M}Z")
        if not found:
            print(f"no account has or had the name {args.name!r}")
    elif args.action == "stock":
        counts = roles.stock(store)
        for variant, count in counts.items():
            print(f"{variant}\t{count}")
        if not counts:
            print("the deal stock is empty")
    else:
        version, head = roles.schema_version(store)
        state = "up to date" if version == head else f"newest is {head}: patience serve migrates it"
        print(f"schema {version or 'none'} ({state})")
    return 0
