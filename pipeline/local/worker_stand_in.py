"""A worker process of a local run as the runner starts it, standing in for a worker forked by the
fork server (`pipeline.local.fork_server`): it hands the server its environment, working folder and
standard streams, waits, and exits with the worker's status.

It runs as a script under `python -I -S`, so it imports nothing but the standard library and
starts in milliseconds.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import sys

STANDARD_STREAMS = (0, 1, 2)


def main(address: str) -> int:
    # Ctrl-C reaches every process of the terminal's group; the launching process stops the run.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    request = json.dumps({"environ": dict(os.environ), "cwd": os.getcwd()}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.connect(address)
        sent = socket.send_fds(server, [request], list(STANDARD_STREAMS))
        server.sendall(request[sent:])
        server.shutdown(socket.SHUT_WR)
        status = b"".join(iter(lambda: server.recv(64), b""))
    # No status at all: the worker died before it could say (killed, or the server is gone).
    return int(status) if status.strip().lstrip(b"-").isdigit() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
