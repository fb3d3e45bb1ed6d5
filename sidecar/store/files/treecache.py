"""A session's tree index on disk, so reopening a large session does not parse it again.

When a large session closes, its entries' envelopes (type, id, parentId,
timestamp, message head) and where each line sits in the file are written to
``<root>/.index/trees/<hash of the path>.msgpack``, with the context at the
leaf as the JSON it goes over the wire. Reopening reads that instead of the
file: the tree is built from it only when a call needs the tree, the
messages are read back from the file only when a call needs them, and
``buildContext`` at the cached leaf sends the cached JSON as is.

The session file stays the truth. The cache is used only while the file is
the one it was made from: same device, inode, size, modification and
change times, same header line and same last bytes. A file that only grew since (an
append by another program, or by a sidecar that was killed before it could
write the cache) is read from where the cache ends. Anything else, including
a cache that does not decode, means a full parse.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
from operator import attrgetter
from pathlib import Path

import msgspec

from ...format.jsonl import MAP_THRESHOLD, Entry, LineSource, MessageHead, parse_tail
from ..cached import CacheDamaged, CachedContext
from ..tree import SessionTree
from .writer import DIR_MODE, FILE_MODE

_has_blobs = attrgetter("has_blobs")

CACHE_VERSION = 5  # 2: a title line before the header; contexts by the session's rules. 3: dangling parents.
# 4: lines not searched for blob marks (a large file's parse leaves them open); 5: the session_info name (an
# open answers the name without building the tree)
TREES_DIR = Path(".index") / "trees"
# Files smaller than this parse in a few milliseconds; a cache would not pay for itself.
MIN_CACHED_BYTES = MAP_THRESHOLD
# How many of the file's last bytes must still be the same for an append-only growth to be trusted.
TAIL_SAMPLE = 64
# A file that grew by more than this since its cache is parsed whole (the tail is read into memory).
MAX_TAIL_BYTES = 16 * 1024 * 1024


class FileStamp(msgspec.Struct, array_like=True, frozen=True):
    dev: int
    ino: int
    size: int
    mtime_ns: int
    # Changes with every write and cannot be set back (utime can set mtime back).
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStamp:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Columns(msgspec.Struct, array_like=True):
    """The tree's entries, one element per entry in file order."""

    types: list[str]
    ids: list[str]
    parents: list[str | None]
    timestamps: list[str | None]
    offsets: list[int]
    lengths: list[int]
    heads: list[MessageHead | None]
    blobs: list[int]  # indexes of the entries whose line holds a blob reference
    # False: the other entries' lines were not all searched for one (Entry.has_blobs None), so they are
    # looked at when read, as after a parse; True: none of them holds one.
    blobs_searched: bool = True

    def complete(self) -> bool:
        count = len(self.ids)
        return all(
            len(column) == count
            for column in (self.types, self.parents, self.timestamps, self.offsets, self.lengths, self.heads)
        )


class TreeCache(msgspec.Struct, array_like=True):
    version: int
    path: str
    stamp: FileStamp
    header: bytes  # the lines up to the header's end (oh-my-pi's title slot, then the header)
    tail: bytes  # the last TAIL_SAMPLE bytes of the file
    parse_errors: int
    entry_count: int
    leaf_id: str | None  # the last entry's id: the leaf as the file is opened
    torn_tail_at: int | None
    needs_newline: bool
    # Encoded Columns, decoded only when a call needs the tree (opening and
    # answering buildContext at the cached leaf do not).
    columns: msgspec.Raw
    context: CachedContext | None = None
    # Entries whose parent is not in the file (SessionTree.dangling), reported on open.
    dangling: list[str] = []
    # The last session_info's name (pi's name of the session), answered on open: as a JSON string in ASCII
    # (a name may hold a lone surrogate, which UTF-8 cannot encode); None when it has none.
    name: str | None = None

    def session_name(self) -> str | None:
        return None if self.name is None else json.loads(self.name)

    def decode_columns(self) -> Columns:
        """The entries; raises CacheDamaged when they do not decode or do not line up."""
        try:
            columns = _columns_decoder.decode(self.columns)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise CacheDamaged(str(exc)) from None
        if not columns.complete() or len(columns.ids) != self.entry_count:
            raise CacheDamaged("columns of different lengths")
        return columns


_decoder = msgspec.msgpack.Decoder(TreeCache)
_columns_decoder = msgspec.msgpack.Decoder(Columns)
_encoder = msgspec.msgpack.Encoder()


def cache_path(root: Path, session_path: Path) -> Path:
    key = hashlib.sha256(os.fsencode(os.path.abspath(session_path))).hexdigest()[:32]
    return root / TREES_DIR / f"{key}.msgpack"


def read_cache(root: Path, session_path: Path) -> TreeCache | None:
    """The cache made for ``session_path``, or None (missing, damaged, another version, another file).

    The file is mapped, not read: the entries and the kept context stay views of
    it (msgspec.Raw) until they are needed, so opening touches only what it uses.
    A cache is replaced by renaming a new file over it, never changed in place,
    so the mapping stays what it was.
    """
    try:
        with open(cache_path(root, session_path), "rb") as file:
            mapped = mmap.mmap(file.fileno(), 0, prot=mmap.PROT_READ)
        cache = _decoder.decode(mapped)
    except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return None  # ValueError: an empty file cannot be mapped
    if cache.version != CACHE_VERSION or cache.path != os.path.abspath(session_path):
        return None
    return cache


def write_cache(root: Path, cache: TreeCache) -> None:
    """Replace the cache atomically; a failure only means the next open parses the file."""
    target = cache_path(root, Path(cache.path))
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        target.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        _remove_leftovers(target.parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with open(fd, "wb") as out:
            out.write(_encoder.encode(cache))
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)


def _remove_leftovers(folder: Path) -> None:
    """Temp files of sidecars killed while writing a cache (they can be megabytes each)."""
    for item in os.scandir(folder):
        name, _, pid = item.name.rpartition(".tmp-")
        if not name.startswith(".") or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            Path(item.path).unlink(missing_ok=True)
        except OSError:
            pass  # alive, someone else's: leave it


def drop_cache(root: Path, session_path: Path) -> None:
    cache_path(root, session_path).unlink(missing_ok=True)


def sample_tail(fd: int, size: int) -> bytes:
    start = max(0, size - TAIL_SAMPLE)
    return os.pread(fd, size - start, start)


def matches(cache: TreeCache, fd: int, stamp: FileStamp) -> str | None:
    """ "exact" when the file is the one cached, "grown" when it only had lines appended since, else None."""
    old = cache.stamp
    if (old.dev, old.ino) != (stamp.dev, stamp.ino) or stamp.size < old.size:
        return None
    if os.pread(fd, len(cache.header), 0) != cache.header:
        return None
    if sample_tail(fd, old.size) != cache.tail:
        return None
    if stamp == old:
        return "exact"
    if stamp.size == old.size:
        return None  # rewritten in place to the same length: cannot tell what changed
    if cache.torn_tail_at is not None or cache.needs_newline or stamp.size - old.size > MAX_TAIL_BYTES:
        return None  # the old end was not a clean line boundary, or the new part is too big to hold
    return "grown"


def build_cache(
    path: Path,
    header: Entry,
    tree: SessionTree,
    parse_errors: int,
    torn_tail_at: int | None,
    needs_newline: bool,
    stamp: FileStamp,
    tail: bytes,
    context: CachedContext | None,
    prefix: bytes = b"",
) -> TreeCache | None:
    """The cache of a loaded tree, or None when an entry's place in the file is not known."""
    entries = tree.entries
    if any(e.offset < 0 for e in entries):
        return None
    columns = Columns(
        types=[e.type for e in entries],
        ids=[e.id for e in entries],  # type: ignore[misc]  # an entry of a session has its id (Entry.id is typed str | None)
        parents=[e.parent_id for e in entries],
        timestamps=[e.timestamp for e in entries],
        offsets=[e.offset for e in entries],
        lengths=[e.length for e in entries],
        heads=[e.head for e in entries],
        blobs=[i for i, e in enumerate(entries) if e.has_blobs],
        blobs_searched=None not in map(_has_blobs, entries),  # (in C: ``in`` meets None by identity first)
    )
    return TreeCache(
        version=CACHE_VERSION,
        path=os.path.abspath(path),
        stamp=stamp,
        header=prefix + header.raw,
        tail=tail,
        parse_errors=parse_errors,
        entry_count=len(entries),
        leaf_id=entries[-1].id if entries else None,
        torn_tail_at=torn_tail_at,
        needs_newline=needs_newline,
        columns=msgspec.Raw(_encoder.encode(columns)),
        context=context,
        dangling=tree.dangling(),
        name=None if tree.name is None else json.dumps(tree.name),
    )


def tree_of(cache: TreeCache, source: LineSource) -> SessionTree:
    """The tree the cache describes; entries read their lines from ``source`` when asked.

    Raises CacheDamaged when the cache's entries do not decode.
    """
    columns = cache.decode_columns()
    tree = SessionTree()
    add = tree.add
    unknown = False if columns.blobs_searched else None
    for values in zip(
        columns.types, columns.ids, columns.parents, columns.timestamps, columns.heads, columns.offsets, columns.lengths
    ):
        kind, entry_id, parent, stamp, head, offset, length = values
        add(Entry(kind, entry_id, parent, stamp, None, head, offset, length, source, unknown))
    for index in columns.blobs:
        tree.entries[index].has_blobs = True
    return tree


def extend_tree(tree: SessionTree, fd: int, start: int, size: int) -> tuple[int, int | None, bool]:
    """Add the entries of the lines in ``[start, size)`` (appended since the cache was made).

    Returns the parse errors, torn tail and missing newline of that part.
    """
    parsed = parse_tail(os.pread(fd, size - start, start), start)
    tree.add_parsed(parsed.items)
    return parsed.parse_errors, parsed.torn_tail_at, parsed.needs_newline
