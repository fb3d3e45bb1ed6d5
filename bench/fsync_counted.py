"""The sidecar with every ``os.fsync`` logged: ``FSYNC_LOG`` gets one ``<dev>:<inode>`` line per call.

    FSYNC_LOG=/tmp/fsyncs python bench/fsync_counted.py [serve args]

For counting the fsyncs a workload costs (run.py's group-sync figure); the
wrapping is done here, in the benchmark's own launcher, not in the sidecar.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_log = os.environ["FSYNC_LOG"]
_fsync = os.fsync


def counted_fsync(fd: int) -> None:
    _fsync(fd)
    st = os.fstat(fd)
    with open(_log, "a") as out:
        out.write(f"{st.st_dev}:{st.st_ino}\n")


os.fsync = counted_fsync

from sidecar.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
