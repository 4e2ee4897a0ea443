"""``patience serve``: the web app (Starlette under uvicorn), storing in an SQLite file or in PostgreSQL."""

from __future__ import annotations

import argparse
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patience.errors import BadInputError

if TYPE_CHECKING:
    import socket  # imported when serving: the other commands start without it

__all__ = ["DATABASE_URL_ENV", "DEAL_STOCK_ENV", "REDIS_URL_ENV", "register"]

MAX_MESSAGE = 64 * 1024  # a websocket frame larger than this is refused by uvicorn before the app sees it
DATABASE_URL_ENV = "PATIENCE_DATABASE_URL"
REDIS_URL_ENV = "PATIENCE_REDIS_URL"
DEAL_STOCK_ENV = "PATIENCE_DEAL_STOCK"
SMTP_URL_ENV = "PATIENCE_SMTP_URL"
PING_SECONDS = 10.0  # the server pings every socket this often and closes one that does not answer in time
ANALYSIS_WORKERS_ENV = "PATIENCE_ANALYSIS_WORKERS"
ANALYSIS_WORKERS = 1  # worker processes a server process starts for game analyses
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
    p.add_argument("--redis-url", default=None, metavar="URL",
                   help="share one arena with every other patience serve on this Redis (and the same "
                        f"database), e.g. redis://127.0.0.1:6379/0 (default: ${REDIS_URL_ENV} if set; "
                        "without it, this process is an arena of its own)")
    p.add_argument("--forwarded-allow-ips", default=None, metavar="ADDRESSES",
                   help="behind a proxy: the proxy's addresses (comma-separated, or '*'), whose X-Forwarded-For "
                        "and X-Forwarded-Proto name the real client (its address for the sign-in limits, https "
                        "for Secure cookies); default: trust no forwarding header")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="start N server processes on this port (needs --redis-url; default 1)")
    p.add_argument("--analysis-workers", type=int, default=None, metavar="N",
                   help="worker processes that analyse finished games from the queue shared by every process on the "
                        f"database (default {ANALYSIS_WORKERS} a server process, or ${ANALYSIS_WORKERS_ENV}; 0: none "
                        "here, another process works the queue; each game's analysis runs under a CPU budget; one "
                        "more process works verdicts only, while the N all work win chances)")
    p.add_argument("--log-format", choices=("text", "json"), default="text",
                   help="the log lines on stderr: readable text (default) or one JSON object a line (time, "
                        "level, process, event, request id; secrets blanked)")
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="warning",
                   help="the least level logged (default warning; info adds a line per request)")
    p.add_argument("--metrics-port", type=int, default=None, metavar="N",
                   help="serve /metrics (Prometheus text format) on a listener of its own on this port "
                        "(default: no metrics; never on the public port)")
    p.add_argument("--metrics-host", default="127.0.0.1",
                   help="address of the metrics listener (default 127.0.0.1: this machine only)")
    p.add_argument("--smtp-url", default=None, metavar="URL",
                   help="send mail (password reset links; accounts may then keep an e-mail address) through this "
                        "SMTP server: smtp://host:port (STARTTLS when offered), smtp+starttls://user:password@host:587 "
                        f"or smtps://user:password@host:465 (default: ${SMTP_URL_ENV} if set; without it, no mail "
                        "and no password reset)")
    p.add_argument("--smtp-from", default=None, metavar="ADDRESS",
                   help="the sender of the mails, e.g. 'Patience Arena <arena@example.org>' "
                        "(default: patience@ the SMTP host)")
    p.add_argument("--public-url", default=None, metavar="URL",
                   help="the site's address as players reach it, for the links in mails, e.g. "
                        "https://patience.example.org (default: http://HOST:PORT of this listener)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from patience.server.app import DB_FILE, app_from_env, create_app, default_data_dir
    from patience.server.logs import log_config
    from patience.server.storage.store import ArenaLock, Store, StoreError, safe_url, sqlite_url
    from patience.server.transport.door import GuardedLoop
    from patience.server.transport.listener import HeaderGate

    url = args.database_url or os.environ.get(DATABASE_URL_ENV) or None
    redis_url = args.redis_url or os.environ.get(REDIS_URL_ENV) or None
    if url is None:
        data_dir = _writable(Path(args.data_dir if args.data_dir is not None else default_data_dir()))
        url = sqlite_url(data_dir / DB_FILE)
        where = str(data_dir / DB_FILE)
    else:
        where = safe_url(url)
    stock = DEAL_STOCK if args.deal_stock is None else args.deal_stock
    if not 0 <= stock <= 10_000:
        raise BadInputError("--deal-stock is a number of deals from 0 to 10000")
    from_env = os.environ.get(ANALYSIS_WORKERS_ENV, "").strip()
    analysis_workers = args.analysis_workers if args.analysis_workers is not None else \
        ANALYSIS_WORKERS if not from_env else int(from_env) if from_env.isdigit() else -1
    if not 0 <= analysis_workers <= 64:
        raise BadInputError("--analysis-workers is a number of processes from 0 to 64")
    if not 1 <= args.workers <= 64:
        raise BadInputError("--workers is a number of processes from 1 to 64")
    if args.metrics_port is not None and not 1 <= args.metrics_port <= 65535:
        raise BadInputError("--metrics-port is a port number from 1 to 65535")
    if args.metrics_port is not None and args.workers > 1:
        raise BadInputError("--metrics-port serves one process: start N patience serve processes, each with "
                            "its own --port and --metrics-port, rather than --workers N")
    if args.workers > 1 and redis_url is None:
        raise BadInputError("--workers N needs --redis-url: the processes share the arena through Redis")
    smtp_url = args.smtp_url or os.environ.get(SMTP_URL_ENV) or None
    public_url = _public_url(args)
    if smtp_url is not None:
        from patience.server.mail import Mailer

        Mailer.from_url(smtp_url, args.smtp_from)  # a wrong URL is one line before anything starts
    # Reach the database and bring its schema up to date before listening, so that a wrong URL or
    # a database that is down ends the command with one line rather than a failing app.
    store = Store(url)
    # an arena of its own: refuse at once when another process has this database (an SQLite file before
    # it is opened: a server holds it exclusively, and opening it would wait for that server)
    probe = ArenaLock(store) if redis_url is None else None
    sqlite = store.engine.dialect.name == "sqlite"
    try:
        if probe is not None and sqlite:
            probe.acquire()
        store.ping()
        store.migrate()
        if probe is not None and not sqlite:
            probe.acquire()
    except SQLAlchemyError as exc:
        said = str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__]
        raise StoreError(f"cannot migrate the database {where}: {said[0]}") from exc
    else:
        try:
            store.accepts_write()
        except SQLAlchemyError as exc:  # a read-only file or folder, a full disk: no game could be kept
            said = str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__]
            raise StoreError(f"the database {where} accepts no write: {said[0]}") from exc
    finally:
        if probe is not None:
            probe.release()
        store.close()
    if redis_url is not None:
        _check_redis(redis_url)
    listening = _listen(args.host, args.port)
    host = f"[{args.host}]" if ":" in args.host else args.host
    arena = f"; arena shared through {_safe_redis(redis_url)}" if redis_url else ""
    print(f"Patience Arena: http://{host}:{args.port}/  (games and statistics in {where}{arena})")
    if smtp_url is not None:
        from patience.server.mail import safe_smtp_url

        print(f"Mail (password reset links to {public_url}/account) through {safe_smtp_url(smtp_url)}")
    print("Stop with Ctrl+C.")
    options: dict[str, Any] = {"fd": listening.fileno(), "ws_max_size": MAX_MESSAGE, "log_level": args.log_level,
                               "log_config": log_config(args.log_format, args.log_level),
                               "ws_ping_interval": PING_SECONDS, "ws_ping_timeout": PING_SECONDS,
                               # connection caps and a header time limit (patience.server.transport.door and .listener)
                               # (a trusted proxy's address is held by the cap in all only)
                               "loop": functools.partial(GuardedLoop, proxies=args.forwarded_allow_ips),
                               "http": HeaderGate, "h11_max_incomplete_event_size": 16 * 1024,
                               "proxy_headers": args.forwarded_allow_ips is not None,
                               "forwarded_allow_ips": args.forwarded_allow_ips or ""}
    if args.workers > 1:
        # every worker builds its app from the environment; they share the listening socket
        os.environ.update({DATABASE_URL_ENV: store.url, REDIS_URL_ENV: redis_url or "", DEAL_STOCK_ENV: str(stock),
                           SMTP_URL_ENV: smtp_url or "", "PATIENCE_SMTP_FROM": args.smtp_from or "",
                           "PATIENCE_PUBLIC_URL": public_url, ANALYSIS_WORKERS_ENV: str(analysis_workers)})
        uvicorn.run(f"{app_from_env.__module__}:{app_from_env.__name__}", factory=True, workers=args.workers,
                    **options)
    else:
        app = create_app(database_url=store.url, deal_stock=stock, redis_url=redis_url, smtp_url=smtp_url,
                         smtp_from=args.smtp_from, public_url=public_url, analysis_workers=analysis_workers)
        if args.metrics_port is not None:
            _serve_metrics(app, args.metrics_host, args.metrics_port)
        uvicorn.run(app, **options)
    return 0


def _public_url(args: argparse.Namespace) -> str:
    """The site's address for the links in mails: ``--public-url``, else this listener's."""
    from urllib.parse import urlsplit

    if args.public_url:
        parts = urlsplit(args.public_url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise BadInputError(f"--public-url is the site's address, e.g. https://patience.example.org "
                                f"(not {args.public_url!r})")
        return args.public_url.strip().rstrip("/")
    host = f"[{args.host}]" if ":" in args.host else args.host
    return f"http://{host}:{args.port}"


def _serve_metrics(app: Any, host: str, port: int) -> None:
    from patience.server.metrics import serve_metrics

    try:
        serve_metrics(app, host, port)
    except OSError as exc:
        reason = (exc.strerror or str(exc)).split(" (while attempting")[0]
        raise BadInputError(f"cannot serve the metrics on {host} port {port}: {reason} "
                            "(choose another with --metrics-port)") from None
    shown = f"[{host}]" if ":" in host else host
    print(f"Metrics: http://{shown}:{port}/metrics")


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything is printed: a port in use is one clear line."""
    import socket

    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as exc:
        reason = (exc.strerror or str(exc)).split(" (while attempting")[0]
        raise BadInputError(f"cannot listen on {host} port {port}: {reason} (is another server running there? "
                            "choose another with --port)") from None


def _writable(data_dir: Path) -> Path:
    """The data folder, made when missing (mode 0700) and tried with a file of our own: one that cannot be
    written is one clear line before anything starts, rather than a database that fails on its first game.

    A folder that exists keeps the mode its owner chose, except that nobody else may write in it (they
    could remove or replace the database, or put files of their own where the server makes its lock and
    its backups): a folder of ours that others may write is tightened (0777 becomes 0755), with a line
    that says so; one of another user's is refused."""
    import stat
    import sys
    import tempfile

    try:
        # a folder made here is its owner's alone (0700): the database in it holds secret deal keys
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = data_dir.stat()
        if st.st_mode & 0o022:
            if st.st_uid != os.geteuid():
                raise BadInputError(f"the data folder {data_dir} may be written by others (mode "
                                    f"{stat.S_IMODE(st.st_mode):04o}) and belongs to another user: make it "
                                    "writable by its owner alone, or choose another with --data-dir")
            tight = stat.S_IMODE(st.st_mode) & ~0o022
            data_dir.chmod(tight)
            print(f"patience: the data folder {data_dir} could be written by others: its mode is now {tight:04o} "
                  f"(was {stat.S_IMODE(st.st_mode):04o})", file=sys.stderr)
        with tempfile.TemporaryFile(dir=data_dir):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise BadInputError(f"cannot write the data folder {data_dir}: {reason} (choose another with --data-dir, "
                            "or name a database with --database-url)") from None
    return data_dir


def _safe_redis(url: str | None) -> str:
    from urllib.parse import urlsplit

    if not url:
        return ""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


def _check_redis(url: str) -> None:
    """Reach Redis before listening, or end with one line."""
    import asyncio

    from patience.server.bus import BusError, make_bus

    async def ping() -> None:
        bus = make_bus(url)
        try:
            await bus.start()
        finally:
            await bus.close()

    try:
        asyncio.run(ping())
    except BusError as exc:
        raise BadInputError(str(exc)) from None
