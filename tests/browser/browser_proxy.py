"""A TCP proxy in front of the test server, for the browser tests: a slow network (every chunk is held
``delay`` seconds in each direction, in order), a network that drops (``cut()``: every connection goes, what
is held is lost), a server that goes away and comes back (``down()`` closes the port as well, as a stopped
server does; ``up()`` listens on the same port again) and a server whose words are held back while the browser
still speaks (``hold()`` keeps every chunk towards the browsers until ``release()``; nothing is lost). The
browser talks to ``url``; behind it is the app."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proxy:
    def __init__(self, target: str, delay: float = 0.0) -> None:
        self.target = int(target.rsplit(":", 1)[1])
        self.delay = delay
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop = asyncio.new_event_loop()
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.released = asyncio.Event()
        self.released.set()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.up()

    def _run(self, coroutine: object) -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)  # type: ignore[arg-type]

    def up(self) -> None:
        """Listen (again) on the proxy's port: the server is back."""
        async def start() -> None:
            self.server = await asyncio.start_server(self._client, "127.0.0.1", self.port, reuse_address=True)
        self._run(start())

    def hold(self) -> None:
        """Hold every chunk towards the browsers (from now on, and those still on their way) until ``release()``."""
        self._run(self._set(False))

    def release(self) -> None:
        """Let the held chunks go on, in order."""
        self._run(self._set(True))

    async def _set(self, released: bool) -> None:
        if released:
            self.released.set()
        else:
            self.released.clear()

    def cut(self) -> None:
        """Drop every connection now (what is held is lost): the network went."""
        def drop() -> None:
            for w in list(self.writers):
                w.transport.abort()
        self.loop.call_soon_threadsafe(drop)

    def down(self) -> None:
        """Close the port and every connection: the browser finds no server."""
        async def stop() -> None:
            if self.server is not None:
                self.server.close()
                self.server = None
            for w in list(self.writers):
                w.transport.abort()
        self._run(stop())

    def close(self) -> None:
        async def stop() -> None:
            if self.server is not None:
                self.server.close()
            for w in list(self.writers):
                w.transport.abort()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self._run(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        self.writers |= {writer, up_writer}
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer, towards_browser=True))
        finally:
            for w in (writer, up_writer):
                self.writers.discard(w)
                w.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    towards_browser: bool = False) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def forward() -> None:
            while True:
                due, data = await queue.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if towards_browser:
                    await self.released.wait()
                if not data:
                    with contextlib.suppress(OSError):
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()

        task = asyncio.create_task(forward())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time() + self.delay, data))
        except OSError:
            pass
        queue.put_nowait((loop.time() + self.delay, b""))
        with contextlib.suppress(OSError, ConnectionError):
            await task
