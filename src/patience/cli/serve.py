"""``patience serve``: the web app on this machine (Starlette under uvicorn, an SQLite file, nothing else)."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["register"]

MAX_MESSAGE = 64 * 1024  # a websocket frame larger than this is refused by uvicorn before the app sees it


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="play in the browser: start the web app")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="folder of the database file (default: the per-user data folder, "
                        "~/.local/share/patience-arena on Linux)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from patience.server.app import DB_FILE, create_app, default_data_dir

    data_dir = args.data_dir if args.data_dir is not None else default_data_dir()
    app = create_app(data_dir)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Patience Arena: http://{host}:{args.port}/  (games and statistics in {Path(data_dir) / DB_FILE})")
    print("Stop with Ctrl+C.")
    uvicorn.run(app, host=args.host, port=args.port, ws_max_size=MAX_MESSAGE, log_level="warning")
    return 0
