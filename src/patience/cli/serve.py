"""``patience serve``: the web app (Starlette under uvicorn), storing in an SQLite file or in PostgreSQL."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from patience.errors import BadInputError

__all__ = ["DATABASE_URL_ENV", "register"]

MAX_MESSAGE = 64 * 1024  # a websocket frame larger than this is refused by uvicorn before the app sees it
DATABASE_URL_ENV = "PATIENCE_DATABASE_URL"
DEAL_STOCK = 20  # proved-winnable secret duel deals kept ready per duel variant


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="play in the browser: start the web app")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="folder of the database file (default: the per-user data folder, "
                        "~/.local/share/patience-arena on Linux)")
    p.add_argument("--database-url", default=None, metavar="URL",
                   help=f"the database instead of the file in the data folder, e.g. "
                        f"postgresql+psycopg://user:password@host/dbname or sqlite:///FILE "
                        f"(default: ${DATABASE_URL_ENV} if set)")
    p.add_argument("--deal-stock", type=int, default=None, metavar="N",
                   help="secret duel deals proved winnable to keep ready per duel variant, proved by the solvers "
                        f"in the background (default {DEAL_STOCK}; 0: duels get random secret deals)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from patience.server.app import DB_FILE, create_app, default_data_dir
    from patience.server.storage.store import Store, StoreError, safe_url, sqlite_url

    url = args.database_url or os.environ.get(DATABASE_URL_ENV) or None
    if url is None:
        data_dir = Path(args.data_dir if args.data_dir is not None else default_data_dir())
        data_dir.mkdir(parents=True, exist_ok=True)
        url = sqlite_url(data_dir / DB_FILE)
        where = str(data_dir / DB_FILE)
    else:
        where = safe_url(url)
    # Reach the database and bring its schema up to date before listening, so that a wrong URL or
    # a database that is down ends the command with one line rather than a failing app.
    store = Store(url)
    try:
        store.ping()
        store.migrate()
    except SQLAlchemyError as exc:
        said = str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__]
        raise StoreError(f"cannot migrate the database {where}: {said[0]}") from exc
    finally:
        store.close()
    stock = DEAL_STOCK if args.deal_stock is None else args.deal_stock
    if not 0 <= stock <= 10_000:
        raise BadInputError("--deal-stock is a number of deals from 0 to 10000")
    app = create_app(database_url=store.url, deal_stock=stock)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Patience Arena: http://{host}:{args.port}/  (games and statistics in {where})")
    print("Stop with Ctrl+C.")
    uvicorn.run(app, host=args.host, port=args.port, ws_max_size=MAX_MESSAGE, log_level="warning")
    return 0
