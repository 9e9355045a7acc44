"""``tool-loader ARGS`` for a test that starts it as a process: this process's streams go to a warm fork.

Run as ``python -I -S warm_shim.py SOCKET ARGS...`` (``warm_cli.command``): it imports nothing of
ours, hands its standard input, output and error, its working folder and its environment to the
warm interpreter listening on SOCKET, passes on every signal a test or a client sends it
(SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGUSR1, SIGUSR2) to the fork, and exits as the fork did: with
its exit status, or killed by the same signal. If this process is killed outright, its connection
closes and the warm interpreter kills the fork.
"""

import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGABRT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


def main() -> None:
    path, args = sys.argv[1], sys.argv[2:]
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    connection.connect(path)
    request = json.dumps({"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    socket.send_fds(connection, [request], [0, 1, 2])
    pid = struct.unpack("i", connection.recv(4))[0]

    def forward(number: int, _frame: object) -> None:
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            pass

    for number in FORWARDED:
        signal.signal(number, forward)
    returncode = struct.unpack("id", connection.recv(struct.calcsize("id")))[0]
    if returncode < 0:  # killed by a signal: end the same way
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
    os._exit(returncode)


if __name__ == "__main__":
    main()
