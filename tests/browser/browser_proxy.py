"""A TCP proxy in front of the test server, for the browser tests: a slow network (each byte is passed on
``delay`` seconds after it arrived, each way) and a server that goes away and comes back (``down()`` closes
the port and every connection through it, as a stopped server does; ``up()`` listens on the same port again).
The browser talks to ``url``; behind it is the real app."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proxy:
    def __init__(self, target: str, delay: float = 0.0) -> None:
        host, port = target.rsplit("//", 1)[-1].split(":")
        self.target = (host, int(port))
        self.delay = delay
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop = asyncio.new_event_loop()
        self.server: asyncio.base_events.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.up()

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)

    def up(self) -> None:
        """Listen (again) on the proxy's port."""
        async def start() -> None:
            self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)
        self._run(start())

    def down(self) -> None:
        """Close the port and every connection: the browser finds no server."""
        async def stop() -> None:
            if self.server is not None:
                self.server.close()
                self.server = None
            for writer in list(self.writers):
                writer.transport.abort()
            self.writers.clear()
        self._run(stop())

    def close(self) -> None:
        self.down()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self.writers.update((writer, up_writer))
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True)
        self.writers.difference_update((writer, up_writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Pass what ``reader`` gets on to ``writer``, each chunk ``delay`` seconds after it arrived, in order."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def later() -> None:
            while True:
                when, data = await queue.get()
                if not data:
                    break
                wait = when + self.delay - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            writer.close()

        sender = asyncio.ensure_future(later())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((time.monotonic(), data))
        finally:
            queue.put_nowait((time.monotonic(), b""))
            try:
                await sender
            finally:
                writer.transport.abort()
