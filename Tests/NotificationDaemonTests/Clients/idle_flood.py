#!/usr/bin/env python3
"""Opens connections to a TLS port that say nothing or too little, as a hostile client would, and
waits for the server to close them.

A third are TCP alone, a third finish the TLS handshake and then say nothing, a third finish it and
send half of HTTP/2's preface. Prints `opened N` once they are open (some may be closed by the
server before that: a listener at its limit closes the oldest for the newest), then `closed all
after S s` once the server closed every one, and exits 0; exits 1 if some are still open after
--deadline seconds.
"""

import argparse
import resource
import selectors
import socket
import ssl
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--deadline", type=float, default=40.0)
    arguments = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = arguments.count + 64
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))

    context = ssl.create_default_context(cafile=arguments.cafile)
    selector = selectors.DefaultSelector()
    opened = 0
    for index in range(arguments.count):
        raw = socket.create_connection(("127.0.0.1", arguments.port), timeout=10)
        sock = raw
        if index % 3 > 0:
            try:
                sock = context.wrap_socket(raw, server_hostname="localhost")
            except (OSError, ssl.SSLError):
                # Closed by the server to make room: one of those it already let go.
                raw.close()
                opened += 1
                continue
            if index % 3 == 2:
                sock.sendall(b"PRI * HTTP/2.0\r\n")
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
        opened += 1
    print(f"opened {opened}", flush=True)

    started = time.monotonic()
    while selector.get_map():
        remaining = arguments.deadline - (time.monotonic() - started)
        if remaining <= 0:
            print(f"still open after {arguments.deadline} s: {len(selector.get_map())}", flush=True)
            return 1
        for key, _ in selector.select(timeout=min(remaining, 1.0)):
            sock = key.fileobj
            try:
                data = sock.recv(4096)
            except ssl.SSLWantReadError:
                continue
            except (OSError, ssl.SSLError):
                data = b""
            if not data:
                selector.unregister(sock)
                sock.close()
    print(f"closed all after {time.monotonic() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
