"""What the loopback benchmarks share: a ``patience serve`` of their own on a free port, the
percentiles they print, and readings of a process's CPU time and memory."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(data_dir: str, port: int | None = None, extra: Sequence[str] = ()
            ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``patience serve`` on 127.0.0.1 with ``data_dir`` as its data folder (and ``extra`` options,
    e.g. ``--database-url``, ``--redis-url``), for the ``with`` block: (its base URL, its process).
    It is stopped at the end, however the block ends."""
    with serving_many(data_dir, 1, extra, ports=[port] if port else None) as served:
        yield served[0]


@contextlib.contextmanager
def serving_many(data_dir: str, count: int, extra: Sequence[str] = (), ports: Sequence[int] | None = None
                 ) -> Iterator[list[tuple[str, subprocess.Popen[bytes]]]]:
    """``count`` ``patience serve`` processes as :func:`serving` starts one, started together and
    waited for together: [(base URL, process)]. Each writes its log to ``data_dir``/serve-PORT.log."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    started: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    try:
        for i in range(count):
            port = ports[i] if ports else free_port()
            log = Path(data_dir) / f"serve-{port}.log"  # a file, not a pipe nobody reads: a full pipe would stop it
            with log.open("wb") as out:
                process = subprocess.Popen(
                    [sys.executable, "-m", "patience", "serve", "--host", "127.0.0.1", "--port", str(port),
                     "--data-dir", data_dir, "--deal-stock", "0", *extra],
                    stdout=out, stderr=subprocess.STDOUT, env=env,
                )
            started.append((f"http://127.0.0.1:{port}", process, log))
        deadline = time.monotonic() + 30 + 5 * count
        for base, process, log in started:
            while True:
                try:
                    if httpx.get(f"{base}/healthz", timeout=1).text == "ok":
                        break
                except httpx.HTTPError:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise SystemExit(f"the server did not start: {log.read_text()[-2000:]}") from None
                    time.sleep(0.1)
        yield [(base, process) for base, process, _ in started]
    finally:
        for _, process, _ in started:
            if process.poll() is None:
                process.terminate()
        for _, process, _ in started:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank) of ``values``; NaN when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def rss_mb(pid: int) -> float:
    """Resident memory of a process, in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return float("nan")
