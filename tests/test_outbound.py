"""What a process sends other processes: in order per process, in one message on the bus per process
and flush, however many envelopes and page messages queued up."""

from __future__ import annotations

from helpers import run_async
from patience.server.arena import nodes
from patience.server.arena.nodes import Envelope, Outbound, channel_of, read_envelope, unpacked
from patience.server.bus import MemoryBus


def _listen(bus: MemoryBus, node: str, got: list[list[Envelope]]) -> None:
    def on(data: bytes) -> None:
        envelope = read_envelope(data)
        assert envelope is not None
        got.append(unpacked(envelope))

    bus._handlers[channel_of(node)].append(on)


def test_what_queued_for_a_process_goes_in_one_message_in_order_and_page_messages_together() -> None:
    async def main() -> tuple[list[list[Envelope]], list[list[Envelope]], int]:
        bus = MemoryBus()
        to_a: list[list[Envelope]] = []
        to_b: list[list[Envelope]] = []
        _listen(bus, "a", to_a)
        _listen(bus, "b", to_b)
        out = Outbound(bus)
        out.send("a", Envelope("start", m="reloaded/standard/300", d="[]"))
        out.to_peer("a", "p1", b'{"t":"duel"}')
        out.to_peer("a", "p2", b'{"t":"duel"}')
        out.send("b", Envelope("matched", m="m1", x="p3"))
        out.send("a", Envelope("matched", m="m1", x="p1"))
        out.to_peer("a", "p1", b'{"t":"ev"}')
        await out.flush()
        return to_a, to_b, out.sent

    to_a, to_b, sent = run_async(main)
    assert sent == 2  # one message to each process
    assert [[(e.k, e.x, e.o) for e in message] for message in to_a] == [[
        ("start", "", []), ("out", "", [("p1", '{"t":"duel"}'), ("p2", '{"t":"duel"}')]),
        ("matched", "p1", []), ("out", "", [("p1", '{"t":"ev"}')])]]
    assert [[(e.k, e.x) for e in message] for message in to_b] == [[("matched", "p3")]]  # one envelope: as it is


def test_a_long_queue_is_sent_in_messages_of_at_most_pack_most_envelopes() -> None:
    async def main() -> list[list[Envelope]]:
        bus = MemoryBus()
        got: list[list[Envelope]] = []
        _listen(bus, "a", got)
        out = Outbound(bus)
        for n in range(nodes.PACK_MOST * 2 + 1):
            out.send("a", Envelope("matched", m=f"m{n}", x="p"))
        await out.flush()
        return got

    got = run_async(main)
    assert [len(message) for message in got] == [nodes.PACK_MOST, nodes.PACK_MOST, 1]
    assert [e.m for message in got for e in message] == [f"m{n}" for n in range(nodes.PACK_MOST * 2 + 1)]
