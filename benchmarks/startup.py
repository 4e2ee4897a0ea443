"""Benchmark of the server's start: how long importing the app takes, and how long a start takes from the
command to the first answer (``GET /healthz``), the first time on a fresh data folder (the database made)
and again (the README's "second start": the installed checkout, the database there). A start of
``./scripts/serve`` is its checks (is the install up to date: its shell part, run here as the script runs
it, never installing) and then ``patience serve``; each is measured, and the start is their sum.

Each figure is the median of ``--runs`` runs in fresh Python processes (nothing cached in the process;
the operating system's file cache warm after the first). The machine's load average is printed with
them: the target (a second start in at most 1.5 s) is for an idle machine.

    python benchmarks/startup.py
    python benchmarks/startup.py --runs 5
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from loopback import free_port

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECOND_START_S = 1.5


def import_seconds(module: str) -> float:
    """The import of ``module`` in a fresh interpreter, by its own ``-X importtime`` account, s."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                          text=True, check=True)
    line = [x for x in done.stderr.splitlines() if re.search(rf"\|\s*{re.escape(module)}$", x)][-1]
    return int(line.split("|")[1]) / 1e6


def checks_seconds() -> float:
    """The part of ``./scripts/serve`` before ``patience serve`` when nothing needs installing, s (it fails
    rather than install: this benchmark never builds the package)."""
    serve = (ROOT / "scripts" / "serve").read_text()
    checks = serve.split("\nexec ")[0].replace('"$PY" -m pip install -e .', "false")
    started = time.monotonic()
    subprocess.run(["bash", "-c", checks, str(ROOT / "scripts" / "serve")], cwd=ROOT, check=True, capture_output=True)
    return time.monotonic() - started


def serve_seconds(data_dir: str) -> float:
    """``patience serve`` on a free port until it answers, then stopped: s."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    started = time.monotonic()
    with (Path(data_dir) / "serve.log").open("ab") as log:
        process = subprocess.Popen([sys.executable, "-m", "patience", "serve", "--port", str(port), "--data-dir",
                                    data_dir, "--deal-stock", "0"], stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).text == "ok":
                    return time.monotonic() - started
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() - started > 120:
                    raise SystemExit((Path(data_dir) / "serve.log").read_text()[-2000:]) from None
                time.sleep(0.01)
    finally:
        process.terminate()
        process.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    imports = {m: statistics.median(import_seconds(m) for _ in range(args.runs))
               for m in ("patience.cli", "patience.server.app")}
    checks = statistics.median(checks_seconds() for _ in range(args.runs))
    firsts, seconds = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="startup-") as data_dir:
            firsts.append(serve_seconds(data_dir))
            seconds.append(serve_seconds(data_dir))
    load = os.getloadavg()[0]
    print(f"start-up, median of {args.runs} (load average {load:.2f} on {os.cpu_count()} cores)")
    for module, took in imports.items():
        print(f"  import {module:<22} {took * 1000:7.0f} ms")
    print(f"  ./scripts/serve's checks   {checks * 1000:7.0f} ms  (the install up to date)")
    print(f"  patience serve, first      {statistics.median(firsts) * 1000:7.0f} ms  (a fresh data folder)")
    print(f"  patience serve, second     {statistics.median(seconds) * 1000:7.0f} ms")
    second = checks + statistics.median(seconds)
    print(f"  ./scripts/serve, second    {second * 1000:7.0f} ms  "
          f"(target ≤ {TARGET_SECOND_START_S * 1000:.0f} ms on an idle machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
