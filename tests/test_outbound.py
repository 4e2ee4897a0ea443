"""What a process sends other processes: in order per process, in one message on the bus per process
and flush, however many envelopes and page messages queued up."""

from __future__ import annotations

import logging

import msgspec
import pytest

from helpers import run_async
from patience.server.arena import nodes
from patience.server.arena.nodes import Envelope, Matched, Out, Outbound, Start, channel_of, read_envelopes
from patience.server.bus import MemoryBus


def _listen(bus: MemoryBus, node: str, got: list[list[Envelope]]) -> None:
    def on(data: bytes) -> None:
        envelopes = read_envelopes(data)
        assert envelopes
        got.append(envelopes)

    bus._handlers[channel_of(node)].append(on)


def test_what_queued_for_a_process_goes_in_one_message_in_order_and_page_messages_together() -> None:
    async def main() -> tuple[list[list[Envelope]], list[list[Envelope]], int]:
        bus = MemoryBus()
        to_a: list[list[Envelope]] = []
        to_b: list[list[Envelope]] = []
        _listen(bus, "a", to_a)
        _listen(bus, "b", to_b)
        out = Outbound(bus)
        out.send("a", Start("reloaded/standard/300", []))
        out.to_peer("a", "p1", b'{"t":"duel"}')
        out.to_peer("a", "p2", b'{"t":"duel"}')
        out.send("b", Matched("m1", "p3"))
        out.send("a", Matched("m1", "p1"))
        out.to_peer("a", "p1", b'{"t":"ev"}')
        await out.flush()
        return to_a, to_b, out.sent

    to_a, to_b, sent = run_async(main)
    assert sent == 2  # one message to each process
    assert to_a == [[Start("reloaded/standard/300", []), Out([("p1", '{"t":"duel"}'), ("p2", '{"t":"duel"}')]),
                     Matched("m1", "p1"), Out([("p1", '{"t":"ev"}')])]]
    assert to_b == [[Matched("m1", "p3")]]  # one envelope: as it is


def test_a_long_queue_is_sent_in_messages_of_at_most_pack_most_envelopes() -> None:
    async def main() -> list[list[Envelope]]:
        bus = MemoryBus()
        got: list[list[Envelope]] = []
        _listen(bus, "a", got)
        out = Outbound(bus)
        for n in range(nodes.PACK_MOST * 2 + 1):
            out.send("a", Matched(f"m{n}", "p"))
        await out.flush()
        return got

    got = run_async(main)
    assert [len(message) for message in got] == [nodes.PACK_MOST, nodes.PACK_MOST, 1]
    assert [e for message in got for e in message] == [Matched(f"m{n}", "p") for n in range(nodes.PACK_MOST * 2 + 1)]


def test_an_envelope_is_decoded_by_its_kind_into_its_own_type() -> None:
    data = msgspec.json.encode(Start("reloaded/standard/300", [("ua", "entry a"), ("ub", "entry b")]))
    assert msgspec.json.decode(data)["kind"] == "start"
    assert read_envelopes(data) == [Start("reloaded/standard/300", [("ua", "entry a"), ("ub", "entry b")])]


def test_a_message_that_is_no_envelope_is_dropped_and_logged_once(monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """A process of another version (a rolling restart) may send what this one cannot read: dropped, said
    once in the log, and never an error."""
    monkeypatch.setattr(nodes, "_unreadable", 0)
    old = b'{"k":"matched","m":"m1","x":"p1"}'  # the one-letter envelope of before
    with caplog.at_level(logging.WARNING, logger="patience.server"):
        assert read_envelopes(old) == []
        assert read_envelopes(b'{"kind":"teleport","match":"m1"}') == []
        assert read_envelopes(b'{"kind":"many","envelopes":[{"kind":"matched","match":"m1"}]}') == []
        assert read_envelopes(b"not json") == []
    assert len([r for r in caplog.records if "not an envelope" in r.getMessage()]) == 1
    assert read_envelopes(msgspec.json.encode(Matched("m1", "p1"))) == [Matched("m1", "p1")]
