"""``patience admin``: look after the site's database from the command line.

``users [--find TEXT]`` lists accounts, ``grant``/``revoke LOGIN ROLE`` change roles (``moderator``,
``admin``), ``close LOGIN`` closes an account, ``names NAME`` shows the display names an account had
(for moderators: found by login, display name or any former name), ``stock`` shows the deal stock per duel variant and
``schema`` the database's schema version. The database is that of ``patience serve``: ``--database-url``,
``$PATIENCE_DATABASE_URL``, or the SQLite file in the data folder.

It works while the site runs. A ``patience serve`` without ``--redis-url`` holds its SQLite file for
itself (``unix-excl``: no other process can open it), so the command asks that server to do the action
(a request file and SIGUSR1, as ``patience backup`` asks for a copy:
:mod:`patience.server.storage.backups`) and prints its answer; otherwise it opens the database itself.
"""

from __future__ import annotations

import argparse
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

    from patience.cli.backup import server_holds
    from patience.server.storage.roles import ADMIN_ACTIONS, run_admin
    from patience.server.storage.store import StoreError

    if not args.action:
        args.admin_parser.print_usage()
        raise BadInputError("admin needs an action: users, grant, revoke, close, names, stock or schema")
    action_args = {name: getattr(args, name) for name in ADMIN_ACTIONS[args.action]}
    path = _sqlite_path(args)
    if path is not None and server_holds(path) and not _held_here(path):
        lines = _by_server(path, args.action, action_args)
    else:
        store = _store(args)
        try:
            store.ping()
            lines = run_admin(store, args.action, action_args)
        except SQLAlchemyError as exc:
            said = str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__]
            raise StoreError(f"the database cannot answer: {said[0]} (is its schema up to date? "
                             "patience serve migrates it)") from None
        finally:
            store.close()
    for line in lines:
        print(line)
    return 0


def _by_server(path: Path, action: str, action_args: dict[str, str | None]) -> list[str]:
    """Have the ``patience serve`` that holds ``path`` do ``action``; the lines it answers."""
    from patience.cli.backup import ask_server
    from patience.server.storage.backups import admin_paths

    request, done = admin_paths(path)
    answer, pid = ask_server(path, request, done, {"action": action, "args": action_args}, "admin", "answer")
    if not answer.get("ok"):
        raise BadInputError(str(answer.get("error") or f"the patience serve (process {pid}) gave no reason"))
    return [str(line) for line in answer.get("out") or []]


def _held_here(path: Path) -> bool:
    """Whether the server holding ``path`` is this process (an app run in it, as in tests): its file opens here."""
    from patience.cli.backup import _holder

    return _holder(Path(f"{path}.lock"))[0] == os.getpid()


def _sqlite_path(args: argparse.Namespace) -> Path | None:
    """The SQLite file of the database, if it is one."""
    from sqlalchemy.engine import make_url

    from patience.cli.serve import DATABASE_URL_ENV
    from patience.server.app import DB_FILE, default_data_dir
    from patience.server.storage.store import database_url

    url = args.database_url or os.environ.get(DATABASE_URL_ENV) or None
    if url is None:
        return (Path(args.data_dir if args.data_dir is not None else default_data_dir()) / DB_FILE).resolve()
    parsed = make_url(database_url(url))
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database).expanduser().resolve()


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
