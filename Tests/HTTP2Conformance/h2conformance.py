#!/usr/bin/env python3
"""Frame-level HTTP/2 conformance checks for a server over TLS (RFC 9113 and RFC 7540, HPACK RFC 7541).

Each case opens a connection of its own, sends frames (often ones a conforming client never would),
and judges what the server does within a timeout: a connection error (GOAWAY with the expected code,
or the connection closed), a stream error (RST_STREAM with the expected code on the stream; a
connection error with that code counts too), or a normal answer (a response, a PING or SETTINGS
acknowledgement, DATA of the expected size). The cases are the ones h2spec checks, with its ids:
`http2/<section of RFC 7540>/<n>`, `hpack/<section of RFC 7541>/<n>` and `generic/<part>/<n>`.

Requests are shaped like Apple's provider API (POST with a small JSON body to `--path`, the extra
`--header` fields after the pseudo-header fields), since the first server under test speaks it; any
complete response counts as a normal answer, whatever its status. See README.md beside this file.

Needs the `hyperframe` and `hpack` packages (`pip install hyperframe hpack`).
"""

from __future__ import annotations

import argparse
import json
import socket
import ssl
import struct
import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional

try:
    import hpack
    from hpack.huffman import HuffmanEncoder
    from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH
    from hyperframe.frame import (
        ContinuationFrame,
        DataFrame,
        ExtensionFrame,
        Frame,
        GoAwayFrame,
        HeadersFrame,
        PingFrame,
        PriorityFrame,
        PushPromiseFrame,
        RstStreamFrame,
        SettingsFrame,
        WindowUpdateFrame,
    )
except ImportError as missing:  # pragma: no cover - the message is the point
    sys.exit(f"h2conformance: {missing.name} is missing; install it with `pip install hyperframe hpack`")

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# Frame types (RFC 9113 §6) and the flags this suite sets by hand.
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
FLAG_END_STREAM = 0x1
FLAG_ACK = 0x1
FLAG_END_HEADERS = 0x4
FLAG_PADDED = 0x8

# Error codes (RFC 9113 §7).
NO_ERROR = 0x0
PROTOCOL_ERROR = 0x1
FLOW_CONTROL_ERROR = 0x3
STREAM_CLOSED = 0x5
FRAME_SIZE_ERROR = 0x6
REFUSED_STREAM = 0x7
CANCEL = 0x8
COMPRESSION_ERROR = 0x9
ERROR_NAMES = {
    0x0: "NO_ERROR", 0x1: "PROTOCOL_ERROR", 0x2: "INTERNAL_ERROR", 0x3: "FLOW_CONTROL_ERROR",
    0x4: "SETTINGS_TIMEOUT", 0x5: "STREAM_CLOSED", 0x6: "FRAME_SIZE_ERROR", 0x7: "REFUSED_STREAM",
    0x8: "CANCEL", 0x9: "COMPRESSION_ERROR", 0xA: "CONNECT_ERROR", 0xB: "ENHANCE_YOUR_CALM",
    0xC: "INADEQUATE_SECURITY", 0xD: "HTTP_1_1_REQUIRED",
}

# Settings (RFC 9113 §6.5.2).
HEADER_TABLE_SIZE = 0x1
ENABLE_PUSH = 0x2
MAX_CONCURRENT_STREAMS = 0x3
INITIAL_WINDOW_SIZE = 0x4
MAX_FRAME_SIZE = 0x5
MAX_HEADER_LIST_SIZE = 0x6
SETTING_NAMES = {
    0x1: "HEADER_TABLE_SIZE", 0x2: "ENABLE_PUSH", 0x3: "MAX_CONCURRENT_STREAMS",
    0x4: "INITIAL_WINDOW_SIZE", 0x5: "MAX_FRAME_SIZE", 0x6: "MAX_HEADER_LIST_SIZE",
}
FRAME_NAMES = {
    0: "DATA", 1: "HEADERS", 2: "PRIORITY", 3: "RST_STREAM", 4: "SETTINGS", 5: "PUSH_PROMISE",
    6: "PING", 7: "GOAWAY", 8: "WINDOW_UPDATE", 9: "CONTINUATION",
}

BODY = b'{"aps":{"alert":"HTTP/2 conformance"}}'
PING_PAYLOAD = b"h2-conf!"
DEFAULT_PATH = "/3/device/" + "0" * 64


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"0x{code:x}")


def error_names(codes: tuple[int, ...]) -> str:
    return " or ".join(error_name(code) for code in codes)


# --- Frames -----------------------------------------------------------------------------------------
# Well-formed frames come from hyperframe; `raw_frame` writes any header and payload at all, for the
# frames hyperframe (rightly) refuses to build: a stream identifier where none belongs, a wrong length,
# a reserved bit set.

def raw_frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _serialize(frame: Frame, *flags: str) -> bytes:
    for flag in flags:
        frame.flags.add(flag)
    return frame.serialize()


def headers_frame(stream: int, block: bytes, *, end_stream: bool = False, end_headers: bool = True,
                  pad: Optional[int] = None, priority: Optional[tuple[int, int, bool]] = None) -> bytes:
    frame = HeadersFrame(stream, data=block)
    flags = []
    if end_stream:
        flags.append("END_STREAM")
    if end_headers:
        flags.append("END_HEADERS")
    if pad is not None:
        flags.append("PADDED")
        frame.pad_length = pad
    if priority is not None:
        flags.append("PRIORITY")
        frame.depends_on, frame.stream_weight, frame.exclusive = priority
    return _serialize(frame, *flags)


def continuation_frame(stream: int, block: bytes, *, end_headers: bool = True) -> bytes:
    return _serialize(ContinuationFrame(stream, data=block), *(["END_HEADERS"] if end_headers else []))


def data_frame(stream: int, payload: bytes = BODY, *, end_stream: bool = True, pad: Optional[int] = None) -> bytes:
    frame = DataFrame(stream, data=payload)
    flags = ["END_STREAM"] if end_stream else []
    if pad is not None:
        flags.append("PADDED")
        frame.pad_length = pad
    return _serialize(frame, *flags)


def settings_frame(values: Optional[dict[int, int]] = None) -> bytes:
    return SettingsFrame(0, settings=values or {}).serialize()


def settings_ack() -> bytes:
    return _serialize(SettingsFrame(0), "ACK")


def ping_frame(payload: bytes = PING_PAYLOAD, *, ack: bool = False) -> bytes:
    return _serialize(PingFrame(0, opaque_data=payload), *(["ACK"] if ack else []))


def priority_frame(stream: int, depends_on: int = 0, weight: int = 15, exclusive: bool = False) -> bytes:
    return PriorityFrame(stream, depends_on=depends_on, stream_weight=weight, exclusive=exclusive).serialize()


def rst_stream_frame(stream: int, code: int) -> bytes:
    return RstStreamFrame(stream, error_code=code).serialize()


def window_update_frame(stream: int, increment: int) -> bytes:
    return WindowUpdateFrame(stream, window_increment=increment).serialize()


def goaway_frame(last_stream: int, code: int) -> bytes:
    return GoAwayFrame(0, last_stream_id=last_stream, error_code=code).serialize()


def push_promise_frame(stream: int, promised: int, block: bytes) -> bytes:
    return _serialize(PushPromiseFrame(stream, promised_stream_id=promised, data=block), "END_HEADERS")


def split3(block: bytes) -> tuple[bytes, bytes, bytes]:
    """A header block cut in three pieces, for HEADERS and two CONTINUATION frames."""
    third = max(1, len(block) // 3)
    return block[:third], block[third:2 * third], block[2 * third:]


# --- HPACK by hand ----------------------------------------------------------------------------------
# hpack's Encoder picks representations itself; these write one representation exactly, to test each
# kind and to break the rules on purpose. None of them adds to the dynamic table unless asked to.

HUFFMAN = HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH)
EOS = 256


def hpack_integer(value: int, prefix_bits: int, first: int = 0) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = bytearray([first | limit])
    value -= limit
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hpack_string(text: str | bytes, huffman: bool = False) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    if huffman:
        data = HUFFMAN.encode(data)
        return hpack_integer(len(data), 7, 0x80) + data
    return hpack_integer(len(data), 7) + data


def indexed(index: int) -> bytes:
    return hpack_integer(index, 7, 0x80)


def literal(name: int | str, value: str | bytes, *, indexing: str = "without", huffman: bool = False) -> bytes:
    """A literal field: `name` is a table index or a new name; `indexing` is incremental, without or never."""
    prefix_bits, first = {"incremental": (6, 0x40), "without": (4, 0x00), "never": (4, 0x10)}[indexing]
    if isinstance(name, int):
        return hpack_integer(name, prefix_bits, first) + hpack_string(value, huffman)
    return bytes([first]) + hpack_string(name, huffman) + hpack_string(value, huffman)


def table_size_update(size: int) -> bytes:
    return hpack_integer(size, 5, 0x20)


def huffman_code(symbols: list[int], pad_with_ones: bool = True) -> bytes:
    """The Huffman code of the given symbols (EOS allowed), padded to an octet with ones or zeros."""
    bits, count = 0, 0
    for symbol in symbols:
        length = REQUEST_CODES_LENGTH[symbol]
        bits = bits << length | REQUEST_CODES[symbol]
        count += length
    pad = -count % 8
    bits = bits << pad | ((1 << pad) - 1 if pad_with_ones else 0)
    return bits.to_bytes((count + pad) // 8, "big")


def huffman_literal(code: bytes) -> bytes:
    """A string literal marked Huffman-coded, whatever `code` holds."""
    return hpack_integer(len(code), 7, 0x80) + code


# --- The server under test --------------------------------------------------------------------------

@dataclass
class Target:
    host: str
    port: int
    server_name: Optional[str]
    context: ssl.SSLContext
    path: str
    authority: str
    extra_headers: list[tuple[str, str]]
    timeout: float
    verbose: bool = False


class SetupError(Exception):
    """The server could not be reached, or would not speak HTTP/2 over TLS."""


CLOSED = "connection closed"
TIMEOUT = "timeout"


class Connection:
    """One TLS connection speaking raw HTTP/2 frames, with a log of what the server sent."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder(max_header_list_size=1 << 20)
        self.buffer = bytearray()
        self.closed = False
        self.seen: list[str] = []
        self.server_settings: dict[int, int] = {}
        self.pending_block: Optional[tuple[int, bytearray]] = None
        self.last_stream = -1
        try:
            plain = socket.create_connection((target.host, target.port), timeout=target.timeout)
        except OSError as error:
            raise SetupError(f"cannot connect to {target.host}:{target.port}: {error}") from error
        # Small writes follow one another (the ACK of the server's SETTINGS, then the case's frames):
        # without this, each waits for the server's delayed ACK of the one before.
        plain.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock = target.context.wrap_socket(plain, server_hostname=target.server_name)
        except (OSError, ssl.SSLError) as error:
            plain.close()
            raise SetupError(f"TLS handshake failed: {error}") from error
        if self.sock.selected_alpn_protocol() != "h2":
            self.sock.close()
            raise SetupError(f"the server chose ALPN {self.sock.selected_alpn_protocol()!r}, not 'h2'")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    # Sending.

    def send(self, *chunks: bytes) -> None:
        """Writes the frames in one go; a server that closed meanwhile is noted, not raised."""
        if self.closed:
            return
        try:
            self.sock.sendall(b"".join(chunks))
        except (OSError, ssl.SSLError) as error:
            self.note(f"write failed ({error.__class__.__name__})")

    def new_stream(self) -> int:
        self.last_stream += 2
        return self.last_stream

    def fields(self, *, method: str = "POST", extras: bool = True) -> list[tuple[str, str]]:
        """The request's fields: pseudo-header fields, then the `--header` ones unless `extras` is false."""
        pseudo = [(":method", method), (":scheme", "https"), (":path", self.target.path),
                  (":authority", self.target.authority)]
        return pseudo + (list(self.target.extra_headers) if extras else [])

    def block(self, fields: list[tuple[str, str]]) -> bytes:
        return self.encoder.encode(fields)

    def request(self, stream: int, *, extras: bool = True) -> bytes:
        """A complete POST: HEADERS, then DATA with the body and END_STREAM."""
        return headers_frame(stream, self.block(self.fields(extras=extras))) + data_frame(stream)

    def manual_block(self) -> bytes:
        """The request's fields written by hand, touching no dynamic table: POST, https, the path, the
        authority and the `--header` fields, all as literals without indexing but the first two."""
        block = indexed(3) + indexed(7) + literal(4, self.target.path) + literal(1, self.target.authority)
        for name, value in self.target.extra_headers:
            block += literal(name, value)
        return block

    def server_setting(self, key: int, default: Optional[int]) -> Optional[int]:
        return self.server_settings.get(key, default)

    # Receiving.

    def note(self, text: str) -> None:
        self.seen.append(text)
        if self.target.verbose:
            print(f"    < {text}", file=sys.stderr)

    def next_event(self, deadline: float):
        """The next frame from the server, or CLOSED, or TIMEOUT once `deadline` has passed."""
        while True:
            frame = self._take_frame()
            if frame is not None:
                return frame
            if self.closed:
                return CLOSED
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return TIMEOUT
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except (TimeoutError, socket.timeout):
                return TIMEOUT
            except (OSError, ssl.SSLError) as error:
                self.note(f"read failed ({error.__class__.__name__})")
                data = b""
            if data:
                self.buffer += data
            else:
                self.closed = True
                self.note(CLOSED)

    def _take_frame(self):
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                if self.closed:
                    self.note(f"{len(self.buffer)} bytes of a cut frame")
                    self.buffer.clear()
                return None
            header = memoryview(bytes(self.buffer[:9]))
            body = memoryview(bytes(self.buffer[9:9 + length]))
            del self.buffer[:9 + length]
            try:
                frame, _ = Frame.parse_frame_header(header)
                frame.parse_body(body)
            except Exception as error:  # a malformed frame from the server is worth reporting, not dying on
                self.note(f"malformed {FRAME_NAMES.get(header[3], 'frame')} ({error})")
                continue
            frame.wire_length = length
            frame.fields = None
            self._absorb(frame)
            self.note(describe(frame))
            return frame
        return None

    def _absorb(self, frame) -> None:
        """Keeps the connection's state: header blocks decoded in order, the server's SETTINGS acknowledged."""
        if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
            self.server_settings.update(frame.settings)
            table = frame.settings.get(HEADER_TABLE_SIZE)
            if table is not None and table < self.encoder.header_table_size:
                self.encoder.header_table_size = table
            self.send(settings_ack())
        if isinstance(frame, (HeadersFrame, PushPromiseFrame)):
            self.pending_block = (frame.stream_id, bytearray(frame.data))
        elif isinstance(frame, ContinuationFrame) and self.pending_block is not None:
            self.pending_block[1].extend(frame.data)
        else:
            return
        if "END_HEADERS" in frame.flags:
            _, block = self.pending_block
            self.pending_block = None
            try:
                frame.fields = [(str(name), str(value)) for name, value in self.decoder.decode(bytes(block))]
            except Exception as error:
                frame.fields = []
                self.note(f"undecodable header block ({error})")


def describe(frame) -> str:
    name = FRAME_NAMES.get(frame.type, f"frame type 0x{frame.type:02x}")
    if isinstance(frame, ExtensionFrame):
        return f"{name} s{frame.stream_id} {frame.wire_length} bytes"
    text = f"{name} s{frame.stream_id}" if frame.stream_id or frame.type in (DATA, HEADERS) else name
    if isinstance(frame, DataFrame):
        text += f" {frame.wire_length} bytes"
        if frame.data:
            preview = frame.data[:60].decode("utf-8", "replace")
            text += f" {preview!r}"
    elif isinstance(frame, (HeadersFrame, ContinuationFrame, PushPromiseFrame)) and frame.fields is not None:
        status = dict(frame.fields).get(":status")
        text += f" :status {status}" if status else f" {len(frame.fields)} fields"
    elif isinstance(frame, RstStreamFrame):
        text += f" {error_name(frame.error_code)}"
    elif isinstance(frame, GoAwayFrame):
        text += f" last-stream {frame.last_stream_id} {error_name(frame.error_code)}"
        if frame.additional_data:
            text += f" {frame.additional_data[:80].decode('utf-8', 'replace')!r}"
    elif isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
        values = ", ".join(f"{SETTING_NAMES.get(k, hex(k))}={v}" for k, v in frame.settings.items())
        text += f" {{{values}}}"
    elif isinstance(frame, PingFrame):
        text += f" {bytes(frame.opaque_data)!r}"
    elif isinstance(frame, WindowUpdateFrame):
        text += f" +{frame.window_increment}"
    for flag in ("END_STREAM", "END_HEADERS", "ACK"):
        if flag in frame.flags and not (flag == "END_HEADERS" and frame.type == HEADERS):
            text += f" {flag}"
    return text


# --- Judging ----------------------------------------------------------------------------------------

@dataclass
class Verdict:
    outcome: str  # "pass", "fail" or "skip"
    expected: str
    seen: str


def skip(reason: str) -> Verdict:
    return Verdict("skip", reason, "")


def summary_of(seen: list[str], limit: int = 12) -> str:
    if not seen:
        return "nothing"
    if len(seen) > limit:
        return f"({len(seen) - limit} earlier) " + "; ".join(seen[-limit:])
    return "; ".join(seen)


def watch(c: Connection, expected: str, decide: Callable[[object], Optional[bool]]) -> Verdict:
    """Reads until `decide` says pass (True) or fail (False), the connection closes, or the time is up."""
    deadline = time.monotonic() + c.target.timeout
    while True:
        event = c.next_event(deadline)
        decision = decide(event)
        if decision is None and event is TIMEOUT:
            c.note(f"nothing more within {c.target.timeout:g} s")
            decision = False
        if decision is None and event is CLOSED:
            decision = False
        if decision is not None:
            return Verdict("pass" if decision else "fail", expected, summary_of(c.seen))


def is_goaway(event) -> bool:
    return isinstance(event, GoAwayFrame)


def is_header_block(event, stream: int) -> bool:
    return isinstance(event, (HeadersFrame, ContinuationFrame)) and event.stream_id == stream \
        and event.fields is not None


def ends_stream(event, stream: int) -> bool:
    return isinstance(event, (HeadersFrame, DataFrame)) and event.stream_id == stream \
        and "END_STREAM" in event.flags


def connection_error(c: Connection, *codes: int) -> Verdict:
    def decide(event):
        if event is CLOSED:
            return True
        if is_goaway(event):
            return event.error_code in codes
        return None
    return watch(c, f"GOAWAY {error_names(codes)}, or the connection closed", decide)


def stream_error(c: Connection, stream: int, *codes: int) -> Verdict:
    def decide(event):
        if event is CLOSED:
            return True
        if isinstance(event, RstStreamFrame) and event.stream_id == stream:
            return event.error_code in codes
        if is_goaway(event):
            return event.error_code in codes
        return None
    return watch(c, f"RST_STREAM s{stream} {error_names(codes)}, GOAWAY {error_names(codes)}, "
                    "or the connection closed", decide)


def goaway(c: Connection, *codes: int) -> Verdict:
    def decide(event):
        if is_goaway(event):
            return event.error_code in codes
        return None
    return watch(c, f"GOAWAY {error_names(codes)}", decide)


def closes(c: Connection, *codes: int) -> Verdict:
    def decide(event):
        if event is CLOSED:
            return True
        if is_goaway(event) and event.error_code not in codes:
            return False
        return None
    return watch(c, f"the connection closed (after GOAWAY {error_names(codes)}, if any)", decide)


def response(c: Connection, stream: int) -> Verdict:
    def decide(event):
        if is_header_block(event, stream):
            status = dict(event.fields).get(":status", "")
            if status.isdigit() and int(status) >= 200:
                return True
            return None
        if isinstance(event, RstStreamFrame) and event.stream_id == stream:
            return False
        if is_goaway(event) and event.error_code != NO_ERROR:
            return False
        return None
    return watch(c, f"a response (HEADERS with :status) on s{stream}", decide)


def ping_ack(c: Connection, payload: bytes = PING_PAYLOAD) -> Verdict:
    def decide(event):
        if isinstance(event, PingFrame) and "ACK" in event.flags:
            return bytes(event.opaque_data) == payload
        if is_goaway(event):
            return False
        return None
    return watch(c, f"PING ACK {payload!r}", decide)


def acknowledges_settings(c: Connection) -> Verdict:
    def decide(event):
        if isinstance(event, SettingsFrame) and "ACK" in event.flags:
            return True
        if is_goaway(event):
            return False
        return None
    return watch(c, "SETTINGS ACK", decide)


def data_of(c: Connection, stream: int, length: int) -> Verdict:
    def decide(event):
        if isinstance(event, DataFrame) and event.stream_id == stream and event.wire_length > 0:
            return event.wire_length == length
        if ends_stream(event, stream) or is_goaway(event):
            return False
        if isinstance(event, RstStreamFrame) and event.stream_id == stream:
            return False
        return None
    return watch(c, f"DATA s{stream} of {length} bytes (the answer must have a body)", decide)


def no_error(c: Connection, payload: bytes = PING_PAYLOAD) -> Verdict:
    """After the client's GOAWAY: the PING answered, or the connection ended without an error."""
    def decide(event):
        if isinstance(event, PingFrame) and "ACK" in event.flags:
            return bytes(event.opaque_data) == payload
        if is_goaway(event):
            return event.error_code == NO_ERROR
        if event is CLOSED:
            return True
        return None
    return watch(c, f"PING ACK {payload!r}, or GOAWAY NO_ERROR, or the connection closed", decide)


def first_frame_is_settings(c: Connection) -> Verdict:
    def decide(event):
        if isinstance(event, Frame):
            return isinstance(event, SettingsFrame) and "ACK" not in event.flags
        return None
    return watch(c, "SETTINGS (not an ACK) as the server's first frame", decide)


def until_stream_ends(c: Connection, stream: int) -> Optional[Verdict]:
    """Waits for the server to end `stream`; a failing verdict if it does not."""
    def decide(event):
        if ends_stream(event, stream) or (isinstance(event, RstStreamFrame) and event.stream_id == stream):
            return True
        if is_goaway(event):
            return False
        return None
    verdict = watch(c, f"(first) the exchange on s{stream} to end", decide)
    return None if verdict.outcome == "pass" else verdict


def until_headers(c: Connection, stream: int) -> Optional[Verdict]:
    def decide(event):
        if is_header_block(event, stream):
            return True
        if is_goaway(event) or (isinstance(event, RstStreamFrame) and event.stream_id == stream):
            return False
        return None
    verdict = watch(c, f"(first) a response's HEADERS on s{stream}", decide)
    return None if verdict.outcome == "pass" else verdict


# --- The cases --------------------------------------------------------------------------------------

SECTIONS = {
    ("http2", "3.5"): "HTTP/2 Connection Preface",
    ("http2", "4.1"): "Frame Format",
    ("http2", "4.2"): "Frame Size",
    ("http2", "4.3"): "Header Compression and Decompression",
    ("http2", "5.1"): "Stream States",
    ("http2", "5.1.1"): "Stream Identifiers",
    ("http2", "5.1.2"): "Stream Concurrency",
    ("http2", "5.3.1"): "Stream Dependencies",
    ("http2", "5.4.1"): "Connection Error Handling",
    ("http2", "5.5"): "Extending HTTP/2",
    ("http2", "6.1"): "DATA",
    ("http2", "6.2"): "HEADERS",
    ("http2", "6.3"): "PRIORITY",
    ("http2", "6.4"): "RST_STREAM",
    ("http2", "6.5"): "SETTINGS",
    ("http2", "6.5.2"): "Defined SETTINGS Parameters",
    ("http2", "6.5.3"): "Settings Synchronization",
    ("http2", "6.7"): "PING",
    ("http2", "6.8"): "GOAWAY",
    ("http2", "6.9"): "WINDOW_UPDATE",
    ("http2", "6.9.1"): "The Flow-Control Window",
    ("http2", "6.9.2"): "Initial Flow-Control Window Size",
    ("http2", "6.10"): "CONTINUATION",
    ("http2", "7"): "Error Codes",
    ("http2", "8.1"): "HTTP Request/Response Exchange",
    ("http2", "8.1.2"): "HTTP Header Fields",
    ("http2", "8.1.2.1"): "Pseudo-Header Fields",
    ("http2", "8.1.2.2"): "Connection-Specific Header Fields",
    ("http2", "8.1.2.3"): "Request Pseudo-Header Fields",
    ("http2", "8.1.2.6"): "Malformed Requests and Responses",
    ("http2", "8.2"): "Server Push",
    ("hpack", "2.3.3"): "Index Address Space",
    ("hpack", "4.2"): "Maximum Table Size",
    ("hpack", "5.2"): "String Literal Representation",
    ("hpack", "6.1"): "Indexed Header Field Representation",
    ("hpack", "6.3"): "Dynamic Table Size Update",
    ("generic", "1"): "Starting HTTP/2",
    ("generic", "2"): "Streams and Multiplexing",
    ("generic", "3.1"): "DATA",
    ("generic", "3.2"): "HEADERS",
    ("generic", "3.3"): "PRIORITY",
    ("generic", "3.4"): "RST_STREAM",
    ("generic", "3.5"): "SETTINGS",
    ("generic", "3.7"): "PING",
    ("generic", "3.8"): "GOAWAY",
    ("generic", "3.9"): "WINDOW_UPDATE",
    ("generic", "3.10"): "CONTINUATION",
    ("generic", "4"): "HTTP Message Exchanges",
    ("generic", "5"): "HPACK",
}


@dataclass
class Case:
    id: str
    group: str
    section: str
    number: int
    title: str
    run: Callable[[Connection], Verdict]
    handshake: bool
    note: Optional[str] = None

    @property
    def section_title(self) -> str:
        return SECTIONS[(self.group, self.section)]


CASES: list[Case] = []


def case(group: str, section: str, title: str, *, handshake: bool = True, note: Optional[str] = None):
    """Registers a case; its number is its place among the cases of its section. A `note` says where
    RFC 9113 reads otherwise than RFC 7540, which the case follows as h2spec does."""
    def register(run: Callable[[Connection], Verdict]):
        assert (group, section) in SECTIONS, (group, section)
        number = 1 + sum(1 for known in CASES if (known.group, known.section) == (group, section))
        CASES.append(Case(f"{group}/{section}/{number}", group, section, number, title, run, handshake, note))
        return run
    return register


TRAILER = [("x-h2-trailer", "1")]
HALF_CLOSED = ("RFC 9113 §5.1 asks this of a stream still half-closed (remote); a server that has answered "
               "already has closed the stream, and may then ignore the frame")
CLOSED_BY_RESET = ("RFC 7540 §5.1 asks for STREAM_CLOSED after the client's RST_STREAM; RFC 9113 §5.1 lets an "
                   "endpoint ignore frames on a closed stream (it MAY treat them as a connection error STREAM_CLOSED)")
CLOSED_BY_END = ("RFC 7540 §5.1 asks for a connection error STREAM_CLOSED after both END_STREAMs; RFC 9113 §5.1 "
                 "makes that a MAY")
SELF_DEPENDENCY = ("RFC 7540 §5.3.1; RFC 9113 deprecates RFC 7540's priority signals (§5.3.2) and no longer "
                   "states this rule")

# 3.5 HTTP/2 Connection Preface


@case("http2", "3.5", "Sends client connection preface", handshake=False)
def _(c):
    c.send(PREFACE + settings_frame())
    return first_frame_is_settings(c)


@case("http2", "3.5", "Sends invalid connection preface", handshake=False)
def _(c):
    c.send(b"INVALID CONNECTION PREFACE\r\n\r\n")
    return connection_error(c, PROTOCOL_ERROR)

# 4.1 Frame Format


@case("http2", "4.1", "Sends a frame with unknown type")
def _(c):
    c.send(raw_frame(0x16, 0, 0, b"\0" * 8), ping_frame())
    return ping_ack(c)


@case("http2", "4.1", "Sends a frame with undefined flag")
def _(c):
    c.send(raw_frame(PING, 0x16, 0, PING_PAYLOAD))
    return ping_ack(c)


@case("http2", "4.1", "Sends a frame with reserved field bit")
def _(c):
    c.send(raw_frame(PING, 0, 1 << 31, PING_PAYLOAD))
    return ping_ack(c)

# 4.2 Frame Size


@case("http2", "4.2", "Sends a DATA frame with 2^14 octets in length")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), data_frame(s, b"a" * 16384))
    return response(c, s)


@case("http2", "4.2", "Sends a large size DATA frame that exceeds the SETTINGS_MAX_FRAME_SIZE")
def _(c):
    s = c.new_stream()
    limit = c.server_setting(MAX_FRAME_SIZE, 16384)
    c.send(headers_frame(s, c.block(c.fields())), data_frame(s, b"a" * (limit + 1)))
    return stream_error(c, s, FRAME_SIZE_ERROR)


@case("http2", "4.2", "Sends a large size HEADERS frame that exceeds the SETTINGS_MAX_FRAME_SIZE")
def _(c):
    s = c.new_stream()
    limit = c.server_setting(MAX_FRAME_SIZE, 16384)
    block = c.block(c.fields()) + literal("x-h2-filler", "a" * limit)
    c.send(headers_frame(s, block, end_stream=True))
    return connection_error(c, FRAME_SIZE_ERROR)

# 4.3 Header Compression and Decompression


@case("http2", "4.3", "Sends invalid header block fragment")
def _(c):
    s = c.new_stream()
    # A literal whose name is said to be 10 octets long, followed by 3.
    c.send(headers_frame(s, c.manual_block() + bytes([0x40, 10]) + b"abc", end_stream=True))
    return connection_error(c, COMPRESSION_ERROR)


@case("http2", "4.3", "Sends a PRIORITY frame while sending the header blocks")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields()), end_headers=False), priority_frame(s))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "4.3", "Sends a HEADERS frame to another stream while sending the header blocks")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields()), end_headers=False),
           headers_frame(s + 2, c.block(c.fields()), end_stream=True))
    return connection_error(c, PROTOCOL_ERROR)

# 5.1 Stream States


@case("http2", "5.1", "idle: Sends a DATA frame")
def _(c):
    c.send(data_frame(1))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "5.1", "idle: Sends a RST_STREAM frame")
def _(c):
    c.send(rst_stream_frame(1, CANCEL))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "5.1", "idle: Sends a WINDOW_UPDATE frame")
def _(c):
    c.send(window_update_frame(1, 100))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "5.1", "idle: Sends a CONTINUATION frame")
def _(c):
    c.send(continuation_frame(1, c.block(c.fields())))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "5.1", "half closed (remote): Sends a DATA frame", note=HALF_CLOSED)
def _(c):
    s = c.new_stream()
    c.send(c.request(s), data_frame(s))
    return stream_error(c, s, STREAM_CLOSED)


@case("http2", "5.1", "half closed (remote): Sends a HEADERS frame", note=HALF_CLOSED)
def _(c):
    s = c.new_stream()
    c.send(c.request(s), headers_frame(s, c.block(TRAILER), end_stream=True))
    return stream_error(c, s, STREAM_CLOSED)


@case("http2", "5.1", "half closed (remote): Sends a CONTINUATION frame")
def _(c):
    s = c.new_stream()
    c.send(c.request(s), continuation_frame(s, c.block(TRAILER)))
    return stream_error(c, s, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2", "5.1", "closed: Sends a DATA frame after sending RST_STREAM frame", note=CLOSED_BY_RESET)
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), rst_stream_frame(s, CANCEL), data_frame(s))
    return stream_error(c, s, STREAM_CLOSED)


@case("http2", "5.1", "closed: Sends a HEADERS frame after sending RST_STREAM frame", note=CLOSED_BY_RESET)
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), rst_stream_frame(s, CANCEL),
           headers_frame(s, c.block(TRAILER), end_stream=True))
    return stream_error(c, s, STREAM_CLOSED)


@case("http2", "5.1", "closed: Sends a CONTINUATION frame after sending RST_STREAM frame")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), rst_stream_frame(s, CANCEL),
           continuation_frame(s, c.block(TRAILER)))
    return stream_error(c, s, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2", "5.1", "closed: Sends a DATA frame", note=CLOSED_BY_END)
def _(c):
    s = c.new_stream()
    c.send(c.request(s))
    failed = until_stream_ends(c, s)
    if failed:
        return failed
    c.send(data_frame(s))
    return stream_error(c, s, STREAM_CLOSED)


@case("http2", "5.1", "closed: Sends a HEADERS frame", note=CLOSED_BY_END)
def _(c):
    s = c.new_stream()
    c.send(c.request(s))
    failed = until_stream_ends(c, s)
    if failed:
        return failed
    c.send(headers_frame(s, c.block(c.fields()), end_stream=True))
    return stream_error(c, s, STREAM_CLOSED)


@case("http2", "5.1", "closed: Sends a CONTINUATION frame")
def _(c):
    s = c.new_stream()
    c.send(c.request(s))
    failed = until_stream_ends(c, s)
    if failed:
        return failed
    c.send(continuation_frame(s, c.block(TRAILER)))
    return stream_error(c, s, STREAM_CLOSED, PROTOCOL_ERROR)

# 5.1.1 Stream Identifiers


@case("http2", "5.1.1", "Sends even-numbered stream identifier")
def _(c):
    c.send(headers_frame(2, c.block(c.fields()), end_stream=True))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "5.1.1", "Sends stream identifier that is numerically smaller than previous")
def _(c):
    c.send(c.request(5), c.request(3))
    return connection_error(c, PROTOCOL_ERROR)

# 5.1.2 Stream Concurrency


@case("http2", "5.1.2", "Sends HEADERS frames that causes their advertised concurrent stream limit to be exceeded")
def _(c):
    limit = c.server_setting(MAX_CONCURRENT_STREAMS, None)
    if limit is None:
        return skip("the server announces no SETTINGS_MAX_CONCURRENT_STREAMS")
    if limit > 1000:
        return skip(f"SETTINGS_MAX_CONCURRENT_STREAMS is {limit}; this suite opens at most 1,001 streams")
    frames = [headers_frame(c.new_stream(), c.block(c.fields())) for _ in range(limit + 1)]
    c.send(*frames)
    return stream_error(c, c.last_stream, PROTOCOL_ERROR, REFUSED_STREAM)

# 5.3.1 Stream Dependencies


@case("http2", "5.3.1", "Sends HEADERS frame that depends on itself", note=SELF_DEPENDENCY)
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields()), priority=(s, 15, False)), data_frame(s))
    return stream_error(c, s, PROTOCOL_ERROR)


@case("http2", "5.3.1", "Sends PRIORITY frame that depend on itself", note=SELF_DEPENDENCY)
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), priority_frame(s, depends_on=s))
    return stream_error(c, s, PROTOCOL_ERROR)

# 5.4.1 Connection Error Handling


@case("http2", "5.4.1", "Sends an invalid PING frame for connection close")
def _(c):
    c.send(raw_frame(PING, 0, 0, b"\0" * 6))
    return closes(c, FRAME_SIZE_ERROR)


@case("http2", "5.4.1", "Sends an invalid PING frame to receive GOAWAY frame")
def _(c):
    c.send(raw_frame(PING, 0, 3, PING_PAYLOAD))
    return goaway(c, PROTOCOL_ERROR)

# 5.5 Extending HTTP/2


@case("http2", "5.5", "Sends an unknown extension frame")
def _(c):
    c.send(raw_frame(0xFF, 0xFF, 0, b"extension"), ping_frame())
    return ping_ack(c)


@case("http2", "5.5", "Sends an unknown extension frame in the middle of a header block")
def _(c):
    s = c.new_stream()
    first, second, third = split3(c.block(c.fields()))
    c.send(headers_frame(s, first, end_headers=False), raw_frame(0x16, 0, s, b"extension"),
           continuation_frame(s, second + third))
    return connection_error(c, PROTOCOL_ERROR)

# 6.1 DATA


@case("http2", "6.1", "Sends a DATA frame with 0x0 stream identifier")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), raw_frame(DATA, FLAG_END_STREAM, 0, BODY))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.1", "Sends a DATA frame on the stream that is not in \"open\" or \"half-closed (local)\" state",
      note=HALF_CLOSED)
def _(c):
    s = c.new_stream()
    c.send(c.request(s), data_frame(s, b"more"))
    return stream_error(c, s, STREAM_CLOSED)


@case("http2", "6.1", "Sends a DATA frame with invalid pad length")
def _(c):
    s = c.new_stream()
    # Pad length 10 in a payload of 5 octets.
    c.send(headers_frame(s, c.block(c.fields())), raw_frame(DATA, FLAG_END_STREAM | FLAG_PADDED, s, bytes([10]) + b"abcd"))
    return connection_error(c, PROTOCOL_ERROR)

# 6.2 HEADERS


@case("http2", "6.2", "Sends a HEADERS frame without the END_HEADERS flag, and a PRIORITY frame")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields()), end_headers=False), priority_frame(s + 2))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.2", "Sends a HEADERS frame to another stream while sending a HEADERS frame")
def _(c):
    s = c.new_stream()
    first, _, _ = split3(c.block(c.fields()))
    c.send(headers_frame(s, first, end_headers=False),
           headers_frame(s + 2, c.manual_block(), end_stream=True))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.2", "Sends a HEADERS frame with 0x0 stream identifier")
def _(c):
    c.send(raw_frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 0, c.manual_block()))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.2", "Sends a HEADERS frame with invalid pad length")
def _(c):
    s = c.new_stream()
    # Pad length 10 in a payload of 2 octets (the pad length and one field, :method GET).
    c.send(raw_frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM | FLAG_PADDED, s, bytes([10]) + indexed(2)))
    return connection_error(c, PROTOCOL_ERROR)

# 6.3 PRIORITY


@case("http2", "6.3", "Sends a PRIORITY frame with 0x0 stream identifier")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), raw_frame(PRIORITY, 0, 0, struct.pack(">IB", s, 15)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.3", "Sends a PRIORITY frame with a length other than 5 octets")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), raw_frame(PRIORITY, 0, s, struct.pack(">I", 0)))
    return stream_error(c, s, FRAME_SIZE_ERROR)

# 6.4 RST_STREAM


@case("http2", "6.4", "Sends a RST_STREAM frame with 0x0 stream identifier")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), raw_frame(RST_STREAM, 0, 0, struct.pack(">I", CANCEL)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.4", "Sends a RST_STREAM frame on a idle stream")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), rst_stream_frame(s + 2, CANCEL))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.4", "Sends a RST_STREAM frame with a length other than 4 octets")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), raw_frame(RST_STREAM, 0, s, b"\0\0\x08"))
    return connection_error(c, FRAME_SIZE_ERROR)

# 6.5 SETTINGS


@case("http2", "6.5", "Sends a SETTINGS frame with ACK flag and payload")
def _(c):
    c.send(raw_frame(SETTINGS, FLAG_ACK, 0, struct.pack(">HI", INITIAL_WINDOW_SIZE, 65535)))
    return connection_error(c, FRAME_SIZE_ERROR)


@case("http2", "6.5", "Sends a SETTINGS frame with a stream identifier other than 0x0")
def _(c):
    c.send(raw_frame(SETTINGS, 0, 1, struct.pack(">HI", INITIAL_WINDOW_SIZE, 65535)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.5", "Sends a SETTINGS frame with a length other than a multiple of 6 octets")
def _(c):
    c.send(raw_frame(SETTINGS, 0, 0, struct.pack(">HI", INITIAL_WINDOW_SIZE, 65535)[:5]))
    return connection_error(c, FRAME_SIZE_ERROR)

# 6.5.2 Defined SETTINGS Parameters


@case("http2", "6.5.2", "SETTINGS_ENABLE_PUSH (0x2): Sends the value other than 0 or 1")
def _(c):
    c.send(settings_frame({ENABLE_PUSH: 2}))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.5.2", "SETTINGS_INITIAL_WINDOW_SIZE (0x4): Sends the value above the maximum flow control window size")
def _(c):
    c.send(settings_frame({INITIAL_WINDOW_SIZE: 1 << 31}))
    return connection_error(c, FLOW_CONTROL_ERROR)


@case("http2", "6.5.2", "SETTINGS_MAX_FRAME_SIZE (0x5): Sends the value below the initial value")
def _(c):
    c.send(settings_frame({MAX_FRAME_SIZE: 16383}))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.5.2", "SETTINGS_MAX_FRAME_SIZE (0x5): Sends the value above the maximum allowed frame size")
def _(c):
    c.send(settings_frame({MAX_FRAME_SIZE: 1 << 24}))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.5.2", "Sends a SETTINGS frame with unknown identifier")
def _(c):
    c.send(settings_frame({0xFF: 1}))
    return acknowledges_settings(c)

# 6.5.3 Settings Synchronization


@case("http2", "6.5.3", "Sends multiple values of SETTINGS_INITIAL_WINDOW_SIZE")
def _(c):
    s = c.new_stream()
    both = struct.pack(">HI", INITIAL_WINDOW_SIZE, 100) + struct.pack(">HI", INITIAL_WINDOW_SIZE, 1)
    c.send(raw_frame(SETTINGS, 0, 0, both), c.request(s, extras=False))
    return data_of(c, s, 1)


@case("http2", "6.5.3", "Sends a SETTINGS frame without ACK flag")
def _(c):
    c.send(settings_frame({INITIAL_WINDOW_SIZE: 65535}))
    return acknowledges_settings(c)

# 6.7 PING


@case("http2", "6.7", "Sends a PING frame")
def _(c):
    c.send(ping_frame())
    return ping_ack(c)


@case("http2", "6.7", "Sends a PING frame with ACK")
def _(c):
    c.send(ping_frame(b"unasked!", ack=True), ping_frame())
    return ping_ack(c)


@case("http2", "6.7", "Sends a PING frame with a stream identifier field value other than 0x0")
def _(c):
    c.send(raw_frame(PING, 0, 1, PING_PAYLOAD))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.7", "Sends a PING frame with a length field value other than 8")
def _(c):
    c.send(raw_frame(PING, 0, 0, PING_PAYLOAD[:6]))
    return connection_error(c, FRAME_SIZE_ERROR)

# 6.8 GOAWAY


@case("http2", "6.8", "Sends a GOAWAY frame with a stream identifier other than 0x0")
def _(c):
    c.send(raw_frame(GOAWAY, 0, 1, struct.pack(">II", 0, NO_ERROR)))
    return connection_error(c, PROTOCOL_ERROR)

# 6.9 WINDOW_UPDATE


@case("http2", "6.9", "Sends a WINDOW_UPDATE frame with a flow control window increment of 0")
def _(c):
    c.send(raw_frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.9", "Sends a WINDOW_UPDATE frame with a flow control window increment of 0 on a stream")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), raw_frame(WINDOW_UPDATE, 0, s, struct.pack(">I", 0)))
    return stream_error(c, s, PROTOCOL_ERROR)


@case("http2", "6.9", "Sends a WINDOW_UPDATE frame with a length other than 4 octets")
def _(c):
    c.send(raw_frame(WINDOW_UPDATE, 0, 0, b"\0\0\x01"))
    return connection_error(c, FRAME_SIZE_ERROR)

# 6.9.1 The Flow-Control Window


@case("http2", "6.9.1", "Sends SETTINGS frame to set the initial window size to 1 and sends HEADERS frame")
def _(c):
    s = c.new_stream()
    c.send(settings_frame({INITIAL_WINDOW_SIZE: 1}), c.request(s, extras=False))
    return data_of(c, s, 1)


@case("http2", "6.9.1", "Sends multiple WINDOW_UPDATE frames increasing the flow control window to above 2^31-1")
def _(c):
    c.send(window_update_frame(0, 1 << 30), window_update_frame(0, 1 << 30))
    return connection_error(c, FLOW_CONTROL_ERROR)


@case("http2", "6.9.1", "Sends multiple WINDOW_UPDATE frames increasing the flow control window to above 2^31-1 on a stream")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), window_update_frame(s, 1 << 30), window_update_frame(s, 1 << 30))
    return stream_error(c, s, FLOW_CONTROL_ERROR)

# 6.9.2 Initial Flow-Control Window Size


@case("http2", "6.9.2", "Changes SETTINGS_INITIAL_WINDOW_SIZE after sending HEADERS frame")
def _(c):
    s = c.new_stream()
    c.send(settings_frame({INITIAL_WINDOW_SIZE: 0}), c.request(s, extras=False))
    failed = until_headers(c, s)
    if failed:
        return failed
    c.send(settings_frame({INITIAL_WINDOW_SIZE: 1}))
    return data_of(c, s, 1)


@case("http2", "6.9.2", "Sends a SETTINGS frame for window size to be negative")
def _(c):
    s = c.new_stream()
    c.send(settings_frame({INITIAL_WINDOW_SIZE: 3}), c.request(s, extras=False))
    first = data_of(c, s, 3)
    if first.outcome != "pass":
        return first
    # The stream's window goes from 0 to -1, then the WINDOW_UPDATE brings it to 1.
    c.send(settings_frame({INITIAL_WINDOW_SIZE: 2}), window_update_frame(s, 2))
    return data_of(c, s, 1)


@case("http2", "6.9.2", "Sends a SETTINGS_INITIAL_WINDOW_SIZE settings with an exceeded maximum window size value")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), settings_frame({INITIAL_WINDOW_SIZE: 1 << 31}))
    return connection_error(c, FLOW_CONTROL_ERROR)

# 6.10 CONTINUATION


@case("http2", "6.10", "Sends multiple CONTINUATION frames preceded by a HEADERS frame")
def _(c):
    s = c.new_stream()
    first, second, third = split3(c.block(c.fields()))
    c.send(headers_frame(s, first, end_headers=False), continuation_frame(s, second, end_headers=False),
           continuation_frame(s, third), data_frame(s))
    return response(c, s)


@case("http2", "6.10", "Sends a CONTINUATION frame followed by any frame other than CONTINUATION")
def _(c):
    s = c.new_stream()
    first, second, third = split3(c.block(c.fields()))
    c.send(headers_frame(s, first, end_headers=False), continuation_frame(s, second, end_headers=False),
           data_frame(s))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.10", "Sends a CONTINUATION frame with 0x0 stream identifier")
def _(c):
    s = c.new_stream()
    first, second, third = split3(c.block(c.fields()))
    c.send(headers_frame(s, first, end_headers=False), raw_frame(CONTINUATION, FLAG_END_HEADERS, 0, second + third))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.10", "Sends a CONTINUATION frame preceded by a HEADERS frame with END_HEADERS flag")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), continuation_frame(s, c.block(TRAILER)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.10", "Sends a CONTINUATION frame preceded by a CONTINUATION frame with END_HEADERS flag")
def _(c):
    s = c.new_stream()
    first, second, third = split3(c.block(c.fields()))
    c.send(headers_frame(s, first, end_headers=False), continuation_frame(s, second + third),
           continuation_frame(s, c.block(TRAILER)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2", "6.10", "Sends a CONTINUATION frame preceded by a DATA frame")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), data_frame(s, end_stream=False),
           continuation_frame(s, c.block(TRAILER)))
    return connection_error(c, PROTOCOL_ERROR)

# 7 Error Codes


@case("http2", "7", "Sends a GOAWAY frame with unknown error code")
def _(c):
    c.send(goaway_frame(0, 0xFF), ping_frame())
    return no_error(c)


@case("http2", "7", "Sends a RST_STREAM frame with unknown error code")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), rst_stream_frame(s, 0xFF), ping_frame())
    return ping_ack(c)

# 8.1 HTTP Request/Response Exchange


@case("http2", "8.1", "Sends a second HEADERS frame without the END_STREAM flag")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), data_frame(s, end_stream=False),
           headers_frame(s, c.block(TRAILER), end_stream=False))
    return stream_error(c, s, PROTOCOL_ERROR)

# 8.1.2 HTTP Header Fields: malformed requests, each sent as HEADERS with END_STREAM.


def malformed_request(c: Connection, fields: list[tuple[str, str]]) -> Verdict:
    s = c.new_stream()
    c.send(headers_frame(s, c.block(fields), end_stream=True))
    return stream_error(c, s, PROTOCOL_ERROR)


def with_pseudo(c: Connection, *changes: tuple[str, Optional[str]], duplicate: Optional[str] = None,
                extra: Optional[tuple[str, str]] = None) -> list[tuple[str, str]]:
    """The request's fields with pseudo-header fields replaced (None drops one), one duplicated, or an
    extra field after the pseudo-header fields."""
    replaced = dict(changes)
    fields = []
    for name, value in c.fields():
        if name in replaced:
            if replaced[name] is not None:
                fields.append((name, replaced[name]))
        else:
            fields.append((name, value))
        if name == duplicate:
            fields.append((name, value))
    if extra is not None:
        pseudo = [f for f in fields if f[0].startswith(":")]
        fields = pseudo + [extra] + [f for f in fields if not f[0].startswith(":")]
    return fields


@case("http2", "8.1.2", "Sends a HEADERS frame that contains the header field name in uppercase letters")
def _(c):
    return malformed_request(c, with_pseudo(c, extra=("X-H2-Conformance", "1")))


@case("http2", "8.1.2.1", "Sends a HEADERS frame that contains a unknown pseudo-header field")
def _(c):
    fields = c.fields()
    return malformed_request(c, fields[:4] + [(":h2-unknown", "1")] + fields[4:])


@case("http2", "8.1.2.1", "Sends a HEADERS frame that contains the pseudo-header field defined for response")
def _(c):
    fields = c.fields()
    return malformed_request(c, fields[:4] + [(":status", "200")] + fields[4:])


@case("http2", "8.1.2.1", "Sends a HEADERS frame that contains a pseudo-header field as trailers")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), data_frame(s, end_stream=False),
           headers_frame(s, c.block([(":method", "POST")]), end_stream=True))
    return stream_error(c, s, PROTOCOL_ERROR)


@case("http2", "8.1.2.1", "Sends a HEADERS frame that contains a pseudo-header field that appears in a header block after a regular header field")
def _(c):
    fields = c.fields()
    return malformed_request(c, fields[:3] + [("x-h2-conformance", "1")] + fields[3:])


@case("http2", "8.1.2.2", "Sends a HEADERS frame that contains the connection-specific header field")
def _(c):
    return malformed_request(c, with_pseudo(c, extra=("connection", "keep-alive")))


@case("http2", "8.1.2.2", "Sends a HEADERS frame that contains the TE header field with any value other than \"trailers\"")
def _(c):
    return malformed_request(c, with_pseudo(c, extra=("te", "trailers, deflate")))


@case("http2", "8.1.2.3", "Sends a HEADERS frame with empty \":path\" pseudo-header field")
def _(c):
    return malformed_request(c, with_pseudo(c, (":path", "")))


@case("http2", "8.1.2.3", "Sends a HEADERS frame that omits \":method\" pseudo-header field")
def _(c):
    return malformed_request(c, with_pseudo(c, (":method", None)))


@case("http2", "8.1.2.3", "Sends a HEADERS frame that omits \":scheme\" pseudo-header field")
def _(c):
    return malformed_request(c, with_pseudo(c, (":scheme", None)))


@case("http2", "8.1.2.3", "Sends a HEADERS frame that omits \":path\" pseudo-header field")
def _(c):
    return malformed_request(c, with_pseudo(c, (":path", None)))


@case("http2", "8.1.2.3", "Sends a HEADERS frame with duplicated \":method\" pseudo-header field")
def _(c):
    return malformed_request(c, with_pseudo(c, duplicate=":method"))


@case("http2", "8.1.2.3", "Sends a HEADERS frame with duplicated \":scheme\" pseudo-header field")
def _(c):
    return malformed_request(c, with_pseudo(c, duplicate=":scheme"))


@case("http2", "8.1.2.3", "Sends a HEADERS frame with duplicated \":path\" pseudo-header field")
def _(c):
    return malformed_request(c, with_pseudo(c, duplicate=":path"))


@case("http2", "8.1.2.6", "Sends a HEADERS frame with the \"content-length\" header field which does not equal the DATA frame payload length")
def _(c):
    s = c.new_stream()
    fields = with_pseudo(c, extra=("content-length", str(len(BODY) + 1)))
    c.send(headers_frame(s, c.block(fields)), data_frame(s))
    return stream_error(c, s, PROTOCOL_ERROR)


@case("http2", "8.1.2.6", "Sends a HEADERS frame with the \"content-length\" header field which does not equal the sum of the multiple DATA frames payload length")
def _(c):
    s = c.new_stream()
    fields = with_pseudo(c, extra=("content-length", str(len(BODY) + 1)))
    c.send(headers_frame(s, c.block(fields)), data_frame(s, BODY[:10], end_stream=False),
           data_frame(s, BODY[10:], end_stream=False), data_frame(s, b"xy"))
    return stream_error(c, s, PROTOCOL_ERROR)

# 8.2 Server Push


@case("http2", "8.2", "Sends a PUSH_PROMISE frame")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), push_promise_frame(s, 2, c.block(c.fields(method="GET"))))
    return connection_error(c, PROTOCOL_ERROR)

# HPACK (RFC 7541): each a request whose header block breaks one decoding rule.


def bad_block(c: Connection, block: bytes) -> Verdict:
    c.send(headers_frame(c.new_stream(), block, end_stream=True))
    return connection_error(c, COMPRESSION_ERROR)


@case("hpack", "2.3.3", "Sends a header field representation with invalid index")
def _(c):
    return bad_block(c, c.manual_block() + indexed(2000))


@case("hpack", "4.2", "Sends a dynamic table size update at the end of header block")
def _(c):
    return bad_block(c, c.manual_block() + table_size_update(0))


@case("hpack", "5.2", "Sends a Huffman-encoded string literal representation with padding longer than 7 bits")
def _(c):
    # "a" is 5 bits, padded with 3 ones, then 8 more ones.
    value = huffman_literal(huffman_code([ord("a")]) + b"\xff")
    return bad_block(c, c.manual_block() + bytes([0x00]) + hpack_string("x-h2-conformance") + value)


@case("hpack", "5.2", "Sends a Huffman-encoded string literal representation padded by zero")
def _(c):
    # "a" is 5 bits; the 3 padding bits are zeros where the rule wants ones.
    value = huffman_literal(huffman_code([ord("a")], pad_with_ones=False))
    return bad_block(c, c.manual_block() + bytes([0x00]) + hpack_string("x-h2-conformance") + value)


@case("hpack", "5.2", "Sends a Huffman-encoded string literal representation containing the EOS symbol")
def _(c):
    value = huffman_literal(huffman_code([ord("a"), EOS, ord("a")]))
    return bad_block(c, c.manual_block() + bytes([0x00]) + hpack_string("x-h2-conformance") + value)


@case("hpack", "6.1", "Sends a indexed header field representation with index 0")
def _(c):
    return bad_block(c, c.manual_block() + indexed(0))


@case("hpack", "6.3", "Sends a dynamic table size update larger than the value of SETTINGS_HEADER_TABLE_SIZE")
def _(c):
    size = c.server_setting(HEADER_TABLE_SIZE, 4096)
    return bad_block(c, table_size_update(size + 1) + c.manual_block())

# generic: things every server must take in its stride.


@case("generic", "1", "Sends a client connection preface", handshake=False)
def _(c):
    c.send(PREFACE + settings_frame({ENABLE_PUSH: 0}))
    return first_frame_is_settings(c)


@case("generic", "2", "Sends a PRIORITY frame on idle stream")
def _(c):
    s = c.new_stream()
    c.send(priority_frame(s), c.request(s))
    return response(c, s)


@case("generic", "2", "Sends a WINDOW_UPDATE frame on half-closed (remote) stream")
def _(c):
    s = c.new_stream()
    c.send(c.request(s), window_update_frame(s, 1))
    return response(c, s)


@case("generic", "2", "Sends a PRIORITY frame on half-closed (remote) stream")
def _(c):
    s = c.new_stream()
    c.send(c.request(s), priority_frame(s))
    return response(c, s)


@case("generic", "2", "Sends a RST_STREAM frame on half-closed (remote) stream")
def _(c):
    s = c.new_stream()
    c.send(c.request(s), rst_stream_frame(s, CANCEL), ping_frame())
    return ping_ack(c)


@case("generic", "2", "Sends a PRIORITY frame on closed stream")
def _(c):
    s = c.new_stream()
    c.send(c.request(s))
    failed = until_stream_ends(c, s)
    if failed:
        return failed
    c.send(priority_frame(s), ping_frame())
    return ping_ack(c)


@case("generic", "3.1", "Sends a DATA frame")
def _(c):
    s = c.new_stream()
    c.send(c.request(s))
    return response(c, s)


@case("generic", "3.1", "Sends multiple DATA frames")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), data_frame(s, BODY[:10], end_stream=False),
           data_frame(s, BODY[10:20], end_stream=False), data_frame(s, BODY[20:]))
    return response(c, s)


@case("generic", "3.1", "Sends a DATA frame with padding")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), data_frame(s, pad=8))
    return response(c, s)


@case("generic", "3.2", "Sends a HEADERS frame")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields()), end_stream=True))
    return response(c, s)


@case("generic", "3.2", "Sends a HEADERS frame with padding")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields()), pad=8), data_frame(s))
    return response(c, s)


@case("generic", "3.2", "Sends a HEADERS frame with priority")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields()), priority=(0, 255, False)), data_frame(s))
    return response(c, s)


@case("generic", "3.3", "Sends a PRIORITY frame with priority 1")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), priority_frame(s, weight=0), data_frame(s))
    return response(c, s)


@case("generic", "3.3", "Sends a PRIORITY frame with priority 256")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), priority_frame(s, weight=255), data_frame(s))
    return response(c, s)


def depending(c: Connection, exclusive: bool) -> Verdict:
    """A second stream made to depend on the first: both open at once where the server allows two
    streams, else the first answered before the second opens (a dependency on a closed stream)."""
    first, second = c.new_stream(), c.new_stream()
    if c.server_setting(MAX_CONCURRENT_STREAMS, 100) >= 2:
        c.send(headers_frame(first, c.block(c.fields())), headers_frame(second, c.block(c.fields())),
               priority_frame(second, depends_on=first, exclusive=exclusive), data_frame(first), data_frame(second))
        return response(c, second)
    c.send(c.request(first))
    failed = until_stream_ends(c, first)
    if failed:
        return failed
    c.send(headers_frame(second, c.block(c.fields())), priority_frame(second, depends_on=first, exclusive=exclusive),
           data_frame(second))
    return response(c, second)


@case("generic", "3.3", "Sends a PRIORITY frame with stream dependency")
def _(c):
    return depending(c, exclusive=False)


@case("generic", "3.3", "Sends a PRIORITY frame with exclusive")
def _(c):
    return depending(c, exclusive=True)


@case("generic", "3.3", "Sends a PRIORITY frame for an idle stream, then send a HEADER frame for a lower stream ID")
def _(c):
    c.send(priority_frame(3), c.request(1))
    return response(c, 1)


@case("generic", "3.4", "Sends a RST_STREAM frame")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), rst_stream_frame(s, CANCEL), ping_frame())
    return ping_ack(c)


@case("generic", "3.5", "Sends a SETTINGS frame with SETTINGS_HEADER_TABLE_SIZE")
def _(c):
    c.send(settings_frame({HEADER_TABLE_SIZE: 4096}))
    return acknowledges_settings(c)


@case("generic", "3.5", "Sends a SETTINGS frame with SETTINGS_ENABLE_PUSH")
def _(c):
    c.send(settings_frame({ENABLE_PUSH: 0}))
    return acknowledges_settings(c)


@case("generic", "3.5", "Sends a SETTINGS frame with SETTINGS_MAX_CONCURRENT_STREAMS")
def _(c):
    c.send(settings_frame({MAX_CONCURRENT_STREAMS: 100}))
    return acknowledges_settings(c)


@case("generic", "3.5", "Sends a SETTINGS frame with SETTINGS_INITIAL_WINDOW_SIZE")
def _(c):
    c.send(settings_frame({INITIAL_WINDOW_SIZE: 1 << 20}))
    return acknowledges_settings(c)


@case("generic", "3.5", "Sends a SETTINGS frame with SETTINGS_MAX_FRAME_SIZE")
def _(c):
    c.send(settings_frame({MAX_FRAME_SIZE: 16385}))
    return acknowledges_settings(c)


@case("generic", "3.5", "Sends a SETTINGS frame with SETTINGS_MAX_HEADER_LIST_SIZE")
def _(c):
    c.send(settings_frame({MAX_HEADER_LIST_SIZE: 1 << 16}))
    return acknowledges_settings(c)


@case("generic", "3.5", "Sends a SETTINGS frame with undefined parameter")
def _(c):
    c.send(settings_frame({0x5A: 1}))
    return acknowledges_settings(c)


@case("generic", "3.7", "Sends a PING frame")
def _(c):
    c.send(ping_frame(b"\x00\x01\x02\x03\x04\x05\x06\x07"))
    return ping_ack(c, b"\x00\x01\x02\x03\x04\x05\x06\x07")


@case("generic", "3.8", "Sends a GOAWAY frame")
def _(c):
    c.send(goaway_frame(0, NO_ERROR), ping_frame())
    return no_error(c)


@case("generic", "3.9", "Sends a WINDOW_UPDATE frame with stream ID 0")
def _(c):
    c.send(window_update_frame(0, 1), ping_frame())
    return ping_ack(c)


@case("generic", "3.9", "Sends a WINDOW_UPDATE frame with arbitrary stream ID")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), window_update_frame(s, 1), data_frame(s))
    return response(c, s)


@case("generic", "3.10", "Sends a CONTINUATION frame")
def _(c):
    s = c.new_stream()
    block = c.block(c.fields())
    half = len(block) // 2
    c.send(headers_frame(s, block[:half], end_headers=False), continuation_frame(s, block[half:]), data_frame(s))
    return response(c, s)


@case("generic", "3.10", "Sends multiple CONTINUATION frames")
def _(c):
    s = c.new_stream()
    # HEADERS and five CONTINUATION frames, the last one empty: servers may cap the CONTINUATION frames
    # of a block against floods of them (nghttp2 at 8).
    block = c.block(c.fields())
    size = max(1, -(-len(block) // 5))
    pieces = [block[i:i + size] for i in range(0, len(block), size)]
    frames = [headers_frame(s, pieces[0], end_headers=False)]
    frames += [continuation_frame(s, piece, end_headers=False) for piece in pieces[1:]]
    frames.append(continuation_frame(s, b""))
    c.send(*frames, data_frame(s))
    return response(c, s)


@case("generic", "4", "Sends a GET request")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields(method="GET")), end_stream=True))
    return response(c, s)


@case("generic", "4", "Sends a HEAD request")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields(method="HEAD")), end_stream=True))
    return response(c, s)


@case("generic", "4", "Sends a POST request")
def _(c):
    s = c.new_stream()
    c.send(c.request(s))
    return response(c, s)


@case("generic", "4", "Sends a POST request with trailers")
def _(c):
    s = c.new_stream()
    c.send(headers_frame(s, c.block(c.fields())), data_frame(s, end_stream=False),
           headers_frame(s, c.block(TRAILER), end_stream=True))
    return response(c, s)


# generic/5: one request per representation of RFC 7541 §6, the field under test after the request's.
USER_AGENT = 58  # static table index of "user-agent"


def represented(c: Connection, representation: bytes, *, prefix: bytes = b"") -> Verdict:
    s = c.new_stream()
    c.send(headers_frame(s, prefix + c.manual_block() + representation), data_frame(s))
    return response(c, s)


@case("generic", "5", "Sends a indexed header field representation")
def _(c):
    return represented(c, indexed(16))  # accept-encoding: gzip, deflate


for _indexing, _label in (("incremental", "literal header field with incremental indexing"),
                          ("without", "literal header field without indexing"),
                          ("never", "literal header field never indexed")):
    for _new_name in (False, True):
        for _huffman in (False, True):
            def _register(indexing=_indexing, new_name=_new_name, huffman=_huffman, label=_label):
                title = f"Sends a {label} - {'new name' if new_name else 'indexed name'}"
                if huffman:
                    title += " (with Huffman coding)"

                @case("generic", "5", title)
                def _(c):
                    name = "x-h2-conformance" if new_name else USER_AGENT
                    return represented(c, literal(name, "h2conformance", indexing=indexing, huffman=huffman))
            _register()


@case("generic", "5", "Sends a dynamic table size update")
def _(c):
    size = min(2048, c.server_setting(HEADER_TABLE_SIZE, 4096))
    return represented(c, b"", prefix=table_size_update(size))


@case("generic", "5", "Sends multiple dynamic table size update")
def _(c):
    size = min(4096, c.server_setting(HEADER_TABLE_SIZE, 4096))
    return represented(c, b"", prefix=table_size_update(0) + table_size_update(size))


# --- Running ----------------------------------------------------------------------------------------

@dataclass
class Result:
    case: Case
    verdict: Verdict
    seconds: float

    def as_json(self) -> dict:
        return {
            "id": self.case.id, "group": self.case.group, "section": self.case.section,
            "section_title": self.case.section_title, "number": self.case.number, "title": self.case.title,
            "result": self.verdict.outcome, "expected": self.verdict.expected, "seen": self.verdict.seen,
            "seconds": round(self.seconds, 3), "note": self.case.note,
        }


def run_case(target: Target, chosen: Case) -> Result:
    start = time.monotonic()
    if target.verbose:
        print(f"  {chosen.id}", file=sys.stderr)
    try:
        c = Connection(target)
    except SetupError as error:
        return Result(chosen, Verdict("fail", "a connection", str(error)), time.monotonic() - start)
    try:
        if chosen.handshake:
            c.send(PREFACE + settings_frame({ENABLE_PUSH: 0}))
            if not handshake(c):
                verdict = Verdict("fail", "(first) the server's SETTINGS and the ACK of ours", summary_of(c.seen))
                return Result(chosen, verdict, time.monotonic() - start)
            c.seen.clear()
        verdict = chosen.run(c)
    finally:
        c.close()
    return Result(chosen, verdict, time.monotonic() - start)


def handshake(c: Connection) -> bool:
    """Reads until the server has sent its SETTINGS and acknowledged ours."""
    deadline = time.monotonic() + c.target.timeout
    theirs = ours = False
    while not (theirs and ours):
        event = c.next_event(deadline)
        if event is TIMEOUT or event is CLOSED or is_goaway(event):
            return False
        if isinstance(event, SettingsFrame):
            if "ACK" in event.flags:
                ours = True
            else:
                theirs = True
    return True


def probe(target: Target) -> dict:
    """Connects once to learn the server's SETTINGS; raises SetupError if it does not speak HTTP/2."""
    c = Connection(target)
    try:
        c.send(PREFACE + settings_frame({ENABLE_PUSH: 0}))
        if not handshake(c):
            raise SetupError(f"no HTTP/2 handshake: {summary_of(c.seen)}")
        return {SETTING_NAMES.get(key, hex(key)): value for key, value in c.server_settings.items()}
    finally:
        c.close()


def parse_header(text: str) -> tuple[str, str]:
    start = 1 if text.startswith(":") else 0
    name, colon, value = text[start:].partition(":")
    if not colon or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not name:value")
    return (text[:start] + name).strip().lower(), value.strip()


def selected(filters: list[str]) -> list[Case]:
    if not filters:
        return CASES
    wanted = [f.lower() for f in filters]
    return [known for known in CASES
            if any(f in f"{known.id} {known.section_title} {known.title}".lower() for f in wanted)]


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Frame-level HTTP/2 conformance checks (RFC 9113, RFC 7541) of a server over TLS.")
    parser.add_argument("--host", default="127.0.0.1", help="the server's address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="the server's TLS port")
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument("--cafile", help="PEM file of the certificate authority to trust")
    trust.add_argument("--insecure", action="store_true", help="do not verify the server's certificate")
    parser.add_argument("--server-name", help="the name to verify and send as SNI (default: --host)")
    parser.add_argument("--authority", help="the :authority of requests (default HOST:PORT)")
    parser.add_argument("--path", default=DEFAULT_PATH, help="the :path of requests (default /3/device/0…0)")
    parser.add_argument("--header", action="append", default=[], type=parse_header, metavar="NAME:VALUE",
                        help="a field to add to requests, e.g. 'authorization:bearer <JWT>' (repeatable)")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds to wait per case (default 2)")
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help="write the results as JSON to FILE, or alone to standard output (then no text)")
    parser.add_argument("-k", dest="filters", action="append", default=[], metavar="TEXT",
                        help="run only the cases whose id or title contains TEXT (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every frame received, on stderr")
    args = parser.parse_args(argv)

    cases = selected(args.filters)
    if args.list:
        for known in cases:
            print(f"{known.id:18} {known.section} {known.section_title}: {known.title}")
        return 0
    if args.port is None:
        parser.error("--port is required")
    if not cases:
        parser.error("no case matches the -k filters")

    context = ssl.create_default_context(cafile=args.cafile)
    if args.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["h2"])
    target = Target(
        host=args.host, port=args.port, server_name=args.server_name or args.host, context=context,
        path=args.path, authority=args.authority or f"{args.host}:{args.port}",
        extra_headers=args.header, timeout=args.timeout, verbose=args.verbose)

    text = sys.stdout if args.json != "-" else None
    started = time.monotonic()
    try:
        settings = probe(target)
    except SetupError as error:
        print(f"h2conformance: {error}", file=sys.stderr)
        return 2
    if text:
        print(f"Server {args.host}:{args.port} speaks h2; its SETTINGS: "
              + (", ".join(f"{k}={v}" for k, v in settings.items()) or "none"), file=text)

    results = []
    for chosen in cases:
        result = run_case(target, chosen)
        results.append(result)
        if text:
            line = f"{result.verdict.outcome.upper():4}  {chosen.id:18} {chosen.section} {chosen.section_title}: {chosen.title}"
            if result.verdict.outcome == "fail":
                line += f" -- expected {result.verdict.expected}; seen {result.verdict.seen}"
                if chosen.note:
                    line += f" (note: {chosen.note})"
            elif result.verdict.outcome == "skip":
                line += f" -- {result.verdict.expected}"
            print(line, file=text, flush=True)

    elapsed = time.monotonic() - started
    counts = {outcome: sum(1 for r in results if r.verdict.outcome == outcome) for outcome in ("pass", "fail", "skip")}
    if text:
        print(f"{len(results)} cases in {elapsed:.1f} s", file=text)
        print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped", file=text)
    if args.json:
        document = {
            "server": {"host": args.host, "port": args.port, "settings": settings},
            "timeout": args.timeout,
            "summary": {"passed": counts["pass"], "failed": counts["fail"], "skipped": counts["skip"],
                        "seconds": round(elapsed, 3)},
            "cases": [r.as_json() for r in results],
        }
        if args.json == "-":
            json.dump(document, sys.stdout, indent=2)
            print()
        else:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(document, out, indent=2)
                out.write("\n")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
