"""A worker writes its result frame in as few writes as its text allows: a value of one part (up to
a megabyte of text) goes in one write with the bytes around it, which the engine then reads in
one piece instead of joining several; a larger value takes one write per part."""

from __future__ import annotations

import socket

import pytest

from studio.engine import worker_runtime

PART = 1000


def writes_of(pieces: list[bytes | str]) -> list[bytes]:
    """What ``pieces`` become on the result channel, write by write: on a packet socket each
    write arrives as a packet of its own."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with ours, theirs:
        worker_runtime._write_all(theirs.fileno(), pieces)
        theirs.shutdown(socket.SHUT_WR)
        packets = []
        while packet := ours.recv(1 << 16):
            packets.append(packet)
    return packets


@pytest.fixture(autouse=True)
def small_parts(monkeypatch):
    # A packet socket carries a write of a few hundred kilobytes at most: parts of a thousand
    # characters stand for parts of a megabyte.
    monkeypatch.setattr(worker_runtime, "_TEXT_PART", PART)


def test_a_value_of_one_part_goes_in_one_write_with_the_frame_around_it():
    value = "x" * (PART - 1)
    pieces: list[bytes | str] = [b"HEAD", b'{"status":"ok"', b',"value":', value, b"}"]
    assert writes_of(pieces) == [b'HEAD{"status":"ok","value":' + value.encode() + b"}"]


def test_a_larger_value_takes_one_write_per_part_and_arrives_exactly():
    value = "é€\ud800" * PART  # three parts, of characters taking two and three bytes
    pieces: list[bytes | str] = [b"HEAD", b'{"status":"ok"', b',"value":', value, b"}"]
    writes = writes_of(pieces)
    encoded = value.encode("utf-8", "surrogatepass")
    assert b"".join(writes) == b'HEAD{"status":"ok","value":' + encoded + b"}"
    assert len(writes) == 3
    assert writes[0].startswith(b'HEAD{"status":"ok","value":')
    assert writes[-1].endswith(b"}")


def test_a_frame_without_text_is_one_write():
    assert writes_of([b"HEAD", b'{"status":"error"}']) == [b'HEAD{"status":"error"}']
