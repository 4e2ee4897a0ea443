"""The copy of its SQLite file that a running ``patience serve`` makes when ``patience backup`` asks.

A server without ``--redis-url`` holds its SQLite file for itself (``unix-excl``, and the
:class:`~patience.server.storage.store.ArenaLock` on ``FILE.lock``): no other process can read it,
so the server makes the copy. ``patience backup`` (run as the server's user) writes
``FILE.backup-request`` — ``{"dest": an empty file of its own, "nonce": 32 hex digits}`` — and
sends the process named in ``FILE.lock`` SIGUSR1; the server copies its database into ``dest`` and
answers in ``FILE.backup-done`` — ``{"nonce", "ok", "error", "pages", "seconds"}`` — written whole
(a temporary file renamed). A request that is not exactly that (a symlink, another owner's file,
other JSON) is ignored with one log line.

``patience admin`` asks the same way, since it cannot open the file either: ``FILE.admin-request`` —
``{"nonce", "action", "args"}`` (an action of :data:`patience.server.storage.roles.ADMIN_ACTIONS`) —
and SIGUSR1; the server does the action on its own database (through the connections that hold the
file) and answers in ``FILE.admin-done`` — ``{"nonce", "ok", "error", "out"}`` (the lines to print).
``FILE.lock`` says ``PID backup admin`` while the server answers both.

The copy is SQLite's online backup API from a connection of the server's own (same process, so the
exclusive lock is shared) that first opens a read transaction: in WAL mode that is a snapshot, so
the copy is of one moment (the signal's) and the moves and results go on being committed meanwhile
by the other connections. The pages are copied :data:`STEP_PAGES` at a time with a short pause
between steps (the disk is not taken from the commits); because the snapshot is held across the
steps, a commit between two steps never makes SQLite start the copy again, as it would for a
source connection without a transaction of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import signal
import sqlite3
import stat
import threading
import time
from pathlib import Path
from typing import Any

import anyio

__all__ = ["BackupRequests", "admin_paths", "read_admin_request", "read_request", "request_paths", "write_answer"]

log = logging.getLogger("patience.server")

STEP_PAGES = 256  # 1 MiB of 4 KiB pages a step
STEP_PAUSE = 0.005  # seconds between two steps
NONCE = re.compile(r"[0-9a-f]{32}")
REQUEST_MAX = 4096  # bytes


class Refused(Exception):
    """A request the server does not act on (one log line says why)."""


class Stopping(Exception):
    """The server stops: the copy is given up."""


def request_paths(database: Path) -> tuple[Path, Path]:
    """The request and answer files of the database file ``database``."""
    return Path(f"{database}.backup-request"), Path(f"{database}.backup-done")


def admin_paths(database: Path) -> tuple[Path, Path]:
    """The admin request and answer files of the database file ``database``."""
    return Path(f"{database}.admin-request"), Path(f"{database}.admin-done")


def read_admin_request(path: Path) -> tuple[str, str, dict[str, str | None]]:
    """The nonce, action and arguments of the admin request file at ``path``, or :class:`Refused`."""
    data = _read_json(path)
    if set(data) != {"nonce", "action", "args"} or not isinstance(data["args"], dict) \
            or not isinstance(data["action"], str):
        raise Refused(f"{path} is not an admin request (expected exactly nonce, action and args)")
    nonce = data["nonce"]
    if not isinstance(nonce, str) or not NONCE.fullmatch(nonce):
        raise Refused(f"{path} has no valid nonce")
    return nonce, data["action"], data["args"]


def read_request(path: Path) -> tuple[Path, str]:
    """The destination and nonce of the request file at ``path``, or :class:`Refused`."""
    data = _read_json(path)
    if set(data) != {"dest", "nonce"}:
        raise Refused(f"{path} is not a backup request (expected exactly dest and nonce)")
    dest, nonce = data["dest"], data["nonce"]
    if not isinstance(nonce, str) or not NONCE.fullmatch(nonce):
        raise Refused(f"{path} has no valid nonce")
    if not isinstance(dest, str) or not os.path.isabs(dest) or "\x00" in dest:
        raise Refused(f"{path} names no absolute destination")
    target = Path(dest)
    try:
        st = target.lstat()
    except OSError as exc:
        raise Refused(f"destination {target}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_size != 0:
        raise Refused(f"destination {target} is not an empty regular file of the server's user")
    return target, nonce


def _read_json(path: Path) -> dict[str, Any]:
    """The JSON object of the request file at ``path`` (a regular file of the server's user), or :class:`Refused`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise Refused(f"no request file {path}") from None
    except OSError as exc:  # ELOOP: a symlink
        raise Refused(f"cannot open {path} (a symlink?): {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{path} is not a regular file")
        if st.st_uid != os.getuid():
            raise Refused(f"{path} belongs to uid {st.st_uid}, not to the server's {os.getuid()}")
        if st.st_size > REQUEST_MAX:
            raise Refused(f"{path} is too long ({st.st_size} bytes)")
        raw = os.read(fd, REQUEST_MAX + 1)
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise Refused(f"{path} is not JSON") from None
    if not isinstance(data, dict):
        raise Refused(f"{path} is not a JSON object")
    return data


def write_answer(path: Path, answer: dict[str, Any]) -> None:
    """Write ``answer`` at ``path`` whole (0600): a temporary file beside it, renamed."""
    temp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(answer, f)
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


class BackupRequests:
    """Answers SIGUSR1 with a copy of the store's SQLite file (see the module's text)."""

    def __init__(self, store: Any, database: Path) -> None:
        self.store = store
        self.database = database
        self.request, self.done = request_paths(database)
        self.admin_request, self.admin_done = admin_paths(database)
        self._admin_task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = threading.Event()
        self._before: Any = None

    def install(self) -> bool:
        """Answer SIGUSR1 from now on; False where that cannot be (no SIGUSR1, not the main thread)."""
        if not hasattr(signal, "SIGUSR1") or threading.current_thread() is not threading.main_thread():
            return False
        loop = asyncio.get_running_loop()
        self._before = signal.getsignal(signal.SIGUSR1)
        try:
            loop.add_signal_handler(signal.SIGUSR1, self._signalled)
        except (RuntimeError, ValueError, NotImplementedError):
            return False
        self._loop = loop
        return True

    async def close(self) -> None:
        """Answer no more; a copy being made is given up (and said so in the answer file)."""
        if self._loop is not None:
            self._loop.remove_signal_handler(signal.SIGUSR1)  # sets the default, which ends the process
            before = self._before
            signal.signal(signal.SIGUSR1, signal.SIG_IGN if before in (None, signal.SIG_DFL) else before)
            self._loop = None
        self._stopping.set()
        for task in (self._task, self._admin_task):
            if task is not None:
                with contextlib.suppress(Exception):
                    await task

    def _signalled(self) -> None:
        if os.path.lexists(self.admin_request):
            if self._admin_task is not None and not self._admin_task.done():
                log.warning("admin: SIGUSR1 while an action is being done: ignored")
            else:
                self._admin_task = asyncio.get_running_loop().create_task(self._serve_admin())
            if not os.path.lexists(self.request):
                return
        if self._task is not None and not self._task.done():
            log.warning("backup: SIGUSR1 while a copy is being made: ignored")
            return
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        try:
            dest, nonce = await anyio.to_thread.run_sync(read_request, self.request)
        except Refused as exc:
            log.warning("backup: request ignored: %s", exc)
            return
        with contextlib.suppress(FileNotFoundError):
            self.request.unlink()  # taken: a second signal does not copy again
        started = time.monotonic()
        answer: dict[str, Any] = {"nonce": nonce, "ok": False, "error": None, "pages": 0, "seconds": 0.0}
        try:
            answer["pages"] = await anyio.to_thread.run_sync(self._copy, dest)
            answer["ok"] = True
        except Stopping:
            answer["error"] = "the server stopped before the copy was made"
        except (sqlite3.Error, OSError) as exc:
            answer["error"] = f"{type(exc).__name__}: {exc}"
        answer["seconds"] = round(time.monotonic() - started, 3)
        if answer["ok"]:
            log.info("backup: copied %s to %s (%d pages in %.2f s)", self.database, dest, answer["pages"],
                     answer["seconds"])
        else:
            log.warning("backup: copy to %s failed: %s", dest, answer["error"])
        try:
            await anyio.to_thread.run_sync(write_answer, self.done, answer)
        except OSError as exc:
            log.warning("backup: cannot write %s: %s", self.done, exc.strerror or exc)

    async def _serve_admin(self) -> None:
        from sqlalchemy.exc import SQLAlchemyError

        from patience.errors import PatienceError
        from patience.server.storage.roles import run_admin

        try:
            nonce, action, args = await anyio.to_thread.run_sync(read_admin_request, self.admin_request)
        except Refused as exc:
            log.warning("admin: request ignored: %s", exc)
            return
        with contextlib.suppress(FileNotFoundError):
            self.admin_request.unlink()  # taken: a second signal does not do it again
        answer: dict[str, Any] = {"nonce": nonce, "ok": False, "error": None, "out": []}
        try:
            answer["out"] = await anyio.to_thread.run_sync(run_admin, self.store, action, args)
            answer["ok"] = True
        except PatienceError as exc:
            answer["error"] = str(exc)
        except SQLAlchemyError as exc:
            said = str(getattr(exc, "orig", None) or exc).strip().splitlines()
            answer["error"] = f"the database cannot answer: {said[0] if said else type(exc).__name__}"
        log.info("admin: %s for patience admin: %s", action, "done" if answer["ok"] else answer["error"])
        try:
            await anyio.to_thread.run_sync(write_answer, self.admin_done, answer)
        except OSError as exc:
            log.warning("admin: cannot write %s: %s", self.admin_done, exc.strerror or exc)

    def _copy(self, dest: Path) -> int:
        """Copy the database into ``dest`` (an empty file); the number of pages copied."""
        total = [0]

        def pace(_status: int, remaining: int, pages: int) -> None:
            total[0] = pages
            if self._stopping.is_set():
                raise Stopping
            if remaining:
                time.sleep(STEP_PAUSE)

        raw = self.store.engine.raw_connection()
        try:
            source: sqlite3.Connection = raw.driver_connection
            target = sqlite3.connect(str(dest), isolation_level=None)
            try:
                os.chmod(dest, 0o600)
                source.execute("BEGIN")
                try:
                    source.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot starts here
                    source.backup(target, pages=STEP_PAGES, progress=pace)
                finally:
                    source.rollback()
                target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
                with open(dest, "rb+") as f:
                    os.fsync(f.fileno())
            finally:
                target.close()
        finally:
            raw.close()
        return total[0]
