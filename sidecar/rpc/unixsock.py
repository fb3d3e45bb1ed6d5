"""A listening unix socket, mode 0600 from the moment it exists (no pygls here: initialize binds it)."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

from ..errors import SocketInUse


def bind_unix(path: Path) -> socket.socket:
    """Listen at ``path``; a stale socket (nobody answers) is replaced, a live one or another file refused."""
    path = Path(path).expanduser()
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise SocketInUse(f"{path} exists and is not a socket; pick another path", path=str(path))
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except OSError:
            path.unlink()  # nobody listens: left by a sidecar that died
        else:
            raise SocketInUse(f"another sidecar already serves {path}; connect to it instead", path=str(path))
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # created 0600: no moment where another user could connect
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    sock.setblocking(False)
    return sock
