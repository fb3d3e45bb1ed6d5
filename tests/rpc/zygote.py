"""A fork server for crash tests: real sidecar processes without paying Python's start-up each time.

Run as ``python tests/rpc/zygote.py SOCKET``. It imports the whole sidecar once,
then for every connection on the Unix socket it receives three descriptors
(stdin, stdout, stderr) and an argv, forks, and the child runs
``sidecar.cli.main(argv)`` on those descriptors exactly as ``python -m sidecar``
would. The child's pid goes back on the connection. Children are reaped by
the kernel (SIGCHLD ignored). The zygote starts no threads, so forking it is safe.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys


def main(path: str) -> None:
    import sidecar.cli  # noqa: F401  (everything the server imports, imported once)
    import sidecar.compaction.run  # noqa: F401
    import sidecar.providers.offline  # noqa: F401
    import sidecar.rpc.server  # noqa: F401

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        message, fds, _, _ = socket.recv_fds(conn, 65536, 3)
        argv = json.loads(message)
        pid = os.fork()
        if pid == 0:
            listener.close()
            conn.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            from sidecar.cli import main as sidecar_main

            code = 1
            try:
                code = sidecar_main(argv)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        for fd in fds:
            os.close(fd)
        conn.sendall(str(pid).encode())
        conn.close()


if __name__ == "__main__":
    main(sys.argv[1])
