"""What a server leaves behind: no process outlives it, and nobody else can read its database.

A real ``patience serve`` with a deal stock runs the solvers in a process of its own (and
multiprocessing's resource tracker with it); killed with SIGKILL, the server runs no code of its own,
yet both end with it. The SQLite files the server makes (the database, its write-ahead log, the lock)
are its owner's alone (0600), and so is a data folder it makes (0700): they hold the secret deal keys.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from arena_processes import free_port
from patience.cli.serve import _writable
from patience.errors import BadInputError
from patience.server.storage.store import ArenaLock, Store, sqlite_url


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The umask most systems have (022): what SQLite would make readable by everyone."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def test_the_sqlite_files_are_the_owners_alone(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "arena.sqlite3"
    store = Store(sqlite_url(path), sole=True)
    lock = ArenaLock(store)
    try:
        lock.acquire()
        store.migrate()
        store.accepts_write()
        files = sorted(p.name for p in tmp_path.iterdir())
        assert "arena.sqlite3-wal" in files and "arena.sqlite3.lock" in files
        assert {name: mode(tmp_path / name) for name in files} == {name: 0o600 for name in files}
    finally:
        lock.release()
        store.close()


def test_a_shared_sqlite_file_is_the_owners_alone_too(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "shared.sqlite3"
    store = Store(sqlite_url(path))  # not sole: the write-ahead log's index is a -shm file
    try:
        store.migrate()
        store.accepts_write()
        files = sorted(p.name for p in tmp_path.iterdir())
        assert "shared.sqlite3-shm" in files
        assert {name: mode(tmp_path / name) for name in files} == {name: 0o600 for name in files}
    finally:
        store.close()


def test_a_database_file_that_exists_keeps_its_mode(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "mine.sqlite3"
    path.touch(mode=0o640)
    path.chmod(0o640)  # the operator's choice (a backup group, say)
    store = Store(sqlite_url(path))
    try:
        store.migrate()
    finally:
        store.close()
    assert mode(path) == 0o640


def test_the_data_folder_the_server_makes_is_the_owners_alone(tmp_path: Path, open_umask: None) -> None:
    made = _writable(tmp_path / "new" / "data")
    assert made.is_dir() and mode(made) == 0o700
    there = tmp_path / "there"
    there.mkdir(mode=0o755)
    there.chmod(0o755)
    assert mode(_writable(there)) == 0o755  # a folder that exists is left as it is


def test_a_data_folder_others_may_write_is_tightened_at_start(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    before = os.umask(0)  # what an operator's shell may have: nothing taken away from what is made
    try:
        folder = tmp_path / "data"
        folder.mkdir()
        folder.chmod(0o777)
        assert mode(_writable(folder)) == 0o755
        assert "now 0755 (was 0777)" in capsys.readouterr().err
        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o1777)  # a sticky /tmp of our own
        assert mode(_writable(shared)) == 0o1755
        store = Store(sqlite_url(folder / "patience.sqlite3"), sole=True)  # the files made in it, under umask 0
        lock = ArenaLock(store)
        try:
            lock.acquire()
            store.migrate()
            store.accepts_write()
        finally:
            lock.release()
            store.close()
        assert {p.name: mode(p) for p in folder.iterdir()} == {p.name: 0o600 for p in folder.iterdir()}
        made = _writable(tmp_path / "new" / "data")
        assert mode(made) == 0o700
        if os.geteuid() == 0:  # another user's folder, open to all: refused, left as it is
            theirs = tmp_path / "theirs"
            theirs.mkdir()
            theirs.chmod(0o777)
            os.chown(theirs, 65534, 65534)
            with pytest.raises(BadInputError, match="belongs to another user"):
                _writable(theirs)
            assert mode(theirs) == 0o777
    finally:
        os.umask(before)


# -- the solver's process ends with the server -------------------------------------------------------


def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    found = proc_stat(pid)
    return found is not None and found[0] not in ("Z", "X")  # a zombie has ended: only its exit code is left


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (found := proc_stat(int(entry.name))) is not None:
            parents[int(entry.name)] = found[1]
    out: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - out
        out |= frontier
    return out


def wait_for(condition: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(what)
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes from /proc")
def test_kill_9_of_the_server_ends_its_solver_process_and_the_resource_tracker(tmp_path: Path) -> None:
    data = tmp_path / "data"  # made by the server
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "patience", "serve", "--port", str(port), "--data-dir", str(data),
                               "--deal-stock", "3"], stdout=log, stderr=subprocess.STDOUT,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    children: set[int] = set()
    try:
        def ready() -> bool:
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0).text == "ok"
            except httpx.HTTPError:
                return False

        wait_for(ready, 60, "the server did not start")
        # the deal stock starts filling at once: its solver process, and multiprocessing's resource tracker

        def solver_running() -> bool:
            nonlocal children
            children = descendants(server.pid)
            lines = [command_line(pid) for pid in children]
            return any("spawn_main" in line for line in lines) and any("resource_tracker" in line for line in lines)

        wait_for(solver_running, 60, "the server started no solver process")
        assert mode(data) == 0o700
        assert {p.name: mode(p) for p in data.iterdir()} == {p.name: 0o600 for p in data.iterdir()}
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
        # what was the server's ends with it: nothing of it is left, however long one waits
        wait_for(lambda: not any(alive(pid) for pid in children), 60,
                 f"left running: {[command_line(pid) for pid in children if alive(pid)]}")
        assert not [pid for pid in descendants(server.pid) if alive(pid)]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for pid in children:  # on a failure, leave no process behind either
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        log.close()
