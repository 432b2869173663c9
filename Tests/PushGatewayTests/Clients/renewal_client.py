"""Holds one HTTP/2 connection to a gateway's provider endpoint across a renewal of its certificate.

Verifies the server as any client does (the authority given, the host's name), with Python's ssl and
the h2 library (aioapns's). Reads commands on standard input, one per line, and prints one JSON line
for each:

  push    sends a push on the connection held since the start: {"status": 200, "body": ""}
  peer    opens a new connection and closes it: {"peer": <SHA-256 of the certificate it was served>}

and, at the start, {"peer": …} for the connection it holds.
"""

import argparse
import hashlib
import json
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events


def connect(arguments, context):
    raw = socket.create_connection((arguments.host, arguments.port), timeout=10)
    tls = context.wrap_socket(raw, server_hostname=arguments.host)
    return tls, hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest()


def push(tls, connection, arguments):
    stream = connection.get_next_available_stream_id()
    body = json.dumps({"aps": {"alert": "Across a renewal"}}).encode()
    connection.send_headers(stream, [
        (":method", "POST"), (":scheme", "https"), (":authority", arguments.host),
        (":path", "/3/device/" + arguments.token), ("authorization", "bearer " + arguments.jwt),
        ("apns-topic", arguments.topic), ("apns-push-type", "alert"), ("content-length", str(len(body))),
    ])
    connection.send_data(stream, body, end_stream=True)
    tls.sendall(connection.data_to_send())
    status, answer = None, b""
    while True:
        data = tls.recv(65536)
        if not data:
            return {"error": "the connection was closed"}
        for event in connection.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                status = int(dict(event.headers)[b":status"])
            elif isinstance(event, h2.events.DataReceived) and event.stream_id == stream:
                answer += event.data
                connection.acknowledge_received_data(event.flow_controlled_length, stream)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                tls.sendall(connection.data_to_send())
                return {"status": status, "body": answer.decode()}
            elif isinstance(event, h2.events.ConnectionTerminated):
                return {"error": "GOAWAY " + str(event.error_code)}
        tls.sendall(connection.data_to_send())


def main():
    parser = argparse.ArgumentParser()
    for name in ("--host", "--ca", "--jwt", "--topic", "--token"):
        parser.add_argument(name, required=True)
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    context = ssl.create_default_context(cafile=arguments.ca)
    context.set_alpn_protocols(["h2"])
    tls, peer = connect(arguments, context)
    connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    tls.sendall(connection.data_to_send())
    print(json.dumps({"peer": peer}), flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "push":
            print(json.dumps(push(tls, connection, arguments)), flush=True)
        elif command == "peer":
            other, served = connect(arguments, context)
            other.close()
            print(json.dumps({"peer": served}), flush=True)


main()
