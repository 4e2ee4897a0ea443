"""The README's run command, ``./scripts/serve``, as a newcomer meets it: in a clean clone the first
start installs (saying so), and a second start of the installed checkout installs nothing and works
with the network cut (``unshare -n``: a namespace with no network but its own loopback)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from arena_processes import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    # as CI and a newcomer run it: Debian's Python first, no virtual environment active
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = "/usr/bin:" + ":".join(p for p in env.get("PATH", "").split(":") if ".venv" not in p)
    return env


def test_a_second_start_installs_nothing_and_works_offline(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    port = free_port()
    log = tmp_path / "first.log"  # a file, not a pipe: nobody reads a pipe while pip and the server write
    with log.open("w") as out:
        first = subprocess.Popen(["bash", "scripts/serve", "--port", str(port), "--data-dir", str(tmp_path / "data"),
                                  "--deal-stock", "0"],
                                 cwd=clone, env=_env(), stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 900  # the first start installs and builds the solvers
        while True:
            assert first.poll() is None, log.read_text()[-3000:]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).text == "ok":
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.5)
    finally:
        first.terminate()
        try:
            first.wait(timeout=60)
        except subprocess.TimeoutExpired:
            first.kill()
            raise
    assert "installing Patience Arena" in log.read_text()

    # the second start, with no network at all: only a loopback of its own, which it serves on
    ask = f"import urllib.request as u; assert u.urlopen('http://127.0.0.1:{port}/healthz', timeout=1).read() == b'ok'"
    inside = f"""
ip link set lo up
start=$(python3 -c 'import time; print(time.time())')
bash scripts/serve --port {port} --data-dir {tmp_path / "data"} --deal-stock 0 2>serve.err &
for i in $(seq 300); do
  if python3 -c "{ask}" 2>/dev/null
  then python3 -c "import time; print('ready after %.1f s' % (time.time() - $start))"
       kill %1; wait; cat serve.err >&2; exit 0; fi
  sleep 0.1
done
kill %1; cat serve.err >&2; exit 1
"""
    second = subprocess.run(["unshare", "-n", "bash", "-c", inside], cwd=clone, env=_env(), capture_output=True,
                            text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert "installing" not in second.stderr and "pip" not in second.stderr, second.stderr
    print(second.stdout.strip())  # "ready after N s": the figure, for whoever runs it with -s
