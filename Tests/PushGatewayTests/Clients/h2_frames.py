"""Drives the provider API frame by frame with python-hyper's h2 (an HTTP/2 implementation of its own,
installed with aioapns), over TLS, and prints what it saw as one JSON object.

Each case opens a connection of its own: a PING answered; an error's body read through an 8-byte
window; padded DATA; trailers; a stream cancelled and the connection still in use; 50 streams at
once; a frame on an even stream, which closes the connection with GOAWAY PROTOCOL_ERROR.

Usage: h2_frames.py --port P --ca CA.pem --authorization "bearer ..." --token HEX --topic BUNDLE
"""
import argparse
import json
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--ca", required=True)
parser.add_argument("--authorization", required=True)
parser.add_argument("--token", required=True)
parser.add_argument("--topic", required=True)
arguments = parser.parse_args()


class Connection:
    def __init__(self, initial_window=None):
        context = ssl.create_default_context(cafile=arguments.ca)
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection(("127.0.0.1", arguments.port), timeout=10)
        self.socket = context.wrap_socket(raw, server_hostname="localhost")
        self.h2 = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.h2.initiate_connection()
        if initial_window is not None:
            self.h2.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: initial_window})
        self.flush()
        self.answers = {}
        self.events = []
        self.closed = False

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.socket.sendall(data)

    def headers(self, path="/3/device/" + arguments.token, topic=None):
        return [(":method", "POST"), (":scheme", "https"), (":path", path), (":authority", "localhost"),
                ("authorization", arguments.authorization), ("apns-topic", topic or arguments.topic)]

    def push(self, body='{"aps":{"alert":"h2"}}', topic=None, pad=None, trailers=None):
        stream = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream, self.headers(topic=topic))
        self.h2.send_data(stream, body.encode(), end_stream=trailers is None, pad_length=pad)
        if trailers is not None:
            self.h2.send_headers(stream, trailers, end_stream=True)
        self.flush()
        return stream

    def read(self, until):
        """Reads events until `until()` holds or the connection closes."""
        while not until() and not self.closed:
            try:
                data = self.socket.recv(65536)
            except socket.timeout:
                break
            if not data:
                self.closed = True
                break
            for event in self.h2.receive_data(data):
                self.events.append(event)
                if isinstance(event, h2.events.ResponseReceived):
                    self.answers.setdefault(event.stream_id, {"body": b""})["headers"] = dict(event.headers)
                elif isinstance(event, h2.events.DataReceived):
                    self.answers.setdefault(event.stream_id, {"body": b""})["body"] += event.data
                    self.answers[event.stream_id].setdefault("frames", []).append(len(event.data))
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    self.answers.setdefault(event.stream_id, {"body": b""})["ended"] = True
                elif isinstance(event, h2.events.ConnectionTerminated):
                    self.closed = True
            self.flush()

    def answer(self, stream):
        self.read(lambda: self.answers.get(stream, {}).get("ended"))
        answer = self.answers.get(stream, {})
        return {"status": answer.get("headers", {}).get(":status"), "body": answer.get("body", b"").decode(),
                "frames": answer.get("frames", [])}


results = {}

connection = Connection()
connection.h2.ping(b"12345678")
connection.flush()
connection.read(lambda: any(isinstance(e, h2.events.PingAckReceived) for e in connection.events))
results["ping"] = [e.ping_data.decode() for e in connection.events if isinstance(e, h2.events.PingAckReceived)]

connection = Connection(initial_window=8)
connection.read(lambda: any(isinstance(e, h2.events.SettingsAcknowledged) for e in connection.events))
results["small_window"] = connection.answer(connection.push(topic="org.other.app"))

connection = Connection()
results["padded"] = connection.answer(connection.push(pad=40))
results["trailers"] = connection.answer(connection.push(trailers=[("x-trailer", "yes")]))
cancelled = connection.h2.get_next_available_stream_id()
connection.h2.send_headers(cancelled, connection.headers())
connection.h2.reset_stream(cancelled, error_code=8)
connection.flush()
results["after_cancel"] = connection.answer(connection.push())
streams = [connection.push() for _ in range(50)]
results["concurrent"] = [connection.answer(stream)["status"] for stream in streams]

# A client that writes a thousand requests before it reads anything (a blocking client): the
# server keeps reading while its answers wait to be read.
connection = Connection()
connection.answer(connection.push())
burst = []
for _ in range(999):
    stream = connection.h2.get_next_available_stream_id()
    connection.h2.send_headers(stream, connection.headers())
    connection.h2.send_data(stream, ('{"aps":{"alert":"%s"}}' % ("x" * 200)).encode(), end_stream=True)
    burst.append(stream)
connection.flush()
results["burst"] = sorted(set(connection.answer(stream)["status"] for stream in burst))

connection = Connection()
connection.answer(connection.push())
# A HEADERS frame on stream 2 (even: the server's), written by hand: the h2 library would not send it.
block = connection.h2.encoder.encode(connection.headers())
frame = len(block).to_bytes(3, "big") + bytes([0x1, 0x5]) + (2).to_bytes(4, "big") + block
connection.socket.sendall(frame)
connection.read(lambda: False)
terminated = [e for e in connection.events if isinstance(e, h2.events.ConnectionTerminated)]
results["even_stream"] = {"goaway": [int(e.error_code) for e in terminated], "closed": connection.closed}

json.dump(results, sys.stdout)
