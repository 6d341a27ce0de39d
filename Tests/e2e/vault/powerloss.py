"""The states a power loss can leave on disk, built from a trace of kc's file operations.

In the manner of SQLite's crash VFS and ALICE ("All File Systems Are Not Created Equal", OSDI
2014). A debug kc records every file operation it completes when KC_FAULT_TRACE names a file
(Sources/KCSystem/FaultSeam.swift). `Model` replays such a trace on the folders under a home,
keeping for each file what its last fsync made durable and the changes made since, and for each
folder the entries its last fsync made durable and the entry changes since. `crash_states`
then builds, at every point of the trace, the states a power loss at that point could leave:

- everything up to each file's last fsync and each folder's last fsync, plus any subset of the
  changes made since (writes, truncations; creations, renames, links, unlinks, mkdirs);
- those changes reordered (a later write reaching the disk before an earlier one);
- a write torn at a 512-byte sector boundary: the sectors before the cut written, with the file
  size either cut there ("torn") or extended to the end of the write with zeros (the size
  reached the disk, the data did not: "zero-filled"); and scattered sectors missing, which
  leaves zeros before written data when the write extended the file ("zero-filled-gap");
- a rename or link without a later fsync of its folder undone.

The persistence model is the weakest POSIX allows (no ordering between unsynced operations,
not even ext4's); a folder entry change is atomic, a rename within one folder too.
"""
from __future__ import annotations

import hashlib
import itertools
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote_to_bytes

SECTOR = 512
O_CREAT, O_TRUNC = 0o100, 0o1000
# Fault classes, weakest first; a state's class is the strongest fault it holds. "as-written":
# what the process had written at that point (what kill -9 leaves: the page cache survives).
CLASSES = ("as-written", "lost", "reordered", "torn", "zero-filled", "zero-filled-gap")
MAX_SUBSET_CHANGES = 6      # all subsets up to this many pending changes, else a sample


@dataclass(frozen=True)
class Write:
    offset: int
    data: bytes


@dataclass(frozen=True)
class Truncate:
    length: int


def parse_trace(text: str) -> list[tuple]:
    """The trace's operations as tuples: ("open", fd, flags, path), ("write", fd, offset, bytes), ..."""
    ops = []
    for line in text.splitlines():
        f = line.split("\t")
        path = lambda s: os.fsdecode(unquote_to_bytes(s))  # noqa: E731
        kind = f[0]
        if kind == "open":
            ops.append(("open", int(f[1]), int(f[2], 16), path(f[4])))
        elif kind in ("close", "fsync"):
            ops.append((kind, int(f[1])))
        elif kind == "write":
            ops.append(("write", int(f[1]), int(f[2]), bytes.fromhex(f[3])))
        elif kind == "ftruncate":
            ops.append(("ftruncate", int(f[1]), int(f[2])))
        elif kind in ("rename", "link"):
            ops.append((kind, path(f[1]), path(f[2])))
        elif kind == "unlink":
            ops.append(("unlink", path(f[1])))
        elif kind == "mkdir":
            ops.append(("mkdir", path(f[2])))
        else:
            raise ValueError(f"unknown trace line: {line[:200]}")
    return ops


def apply_changes(base: bytes, changes) -> bytes:
    buf = bytearray(base)
    for c in changes:
        if isinstance(c, Truncate):
            del buf[c.length:]
            buf.extend(bytes(max(0, c.length - len(buf))))
        else:
            end = c.offset + len(c.data)
            if len(buf) < end:
                buf.extend(bytes(end - len(buf)))
            buf[c.offset:end] = c.data
    return bytes(buf)


def torn_write(before: bytes, w: Write, sectors: set[int], keep_size: bool) -> bytes:
    """`w` applied to `before` with only the sectors (absolute indices) in `sectors` written; the
    file size reaching `w`'s end (`keep_size`, unwritten new bytes zero) or only the last written byte."""
    buf = bytearray(before)
    end = w.offset + len(w.data)
    written_end = max([min(end, (s + 1) * SECTOR) for s in sectors], default=0)
    size = max(len(buf), end if keep_size else written_end)
    buf.extend(bytes(size - len(buf)))
    for s in sectors:
        lo, hi = max(w.offset, s * SECTOR), min(end, (s + 1) * SECTOR)
        buf[lo:hi] = w.data[lo - w.offset:hi - w.offset]
    return bytes(buf)


class File:
    def __init__(self, data: bytes = b""):
        self.data, self.synced, self.pending = bytes(data), bytes(data), []

    def change(self, c) -> None:
        self.data = apply_changes(self.data, [c])
        self.pending.append(c)

    def sync(self) -> None:
        self.synced, self.pending = self.data, []

    def variants(self, rng: random.Random) -> list[tuple[str, bytes]]:
        """(class, content) for every content a power loss could leave in this file."""
        out, p = [("as-written", self.data)], self.pending
        if not p:
            return out
        for subset in _subsets(len(p), rng):
            chosen = [p[i] for i in subset]
            if len(chosen) < len(p):
                out.append(("lost", apply_changes(self.synced, chosen)))
            if len(chosen) >= 2:
                out.append(("reordered", apply_changes(self.synced, chosen[::-1])))
        for i, w in enumerate(p):
            if not isinstance(w, Write):
                continue
            before = apply_changes(self.synced, p[:i])
            first, last = w.offset // SECTOR, (w.offset + len(w.data) - 1) // SECTOR
            extends = w.offset + len(w.data) > len(before)
            span = list(range(first, last + 1))
            for cut in range(len(span)):            # the first `cut` sectors written
                out.append(("torn", torn_write(before, w, set(span[:cut]), keep_size=False)))
                out.append(("zero-filled" if extends else "torn", torn_write(before, w, set(span[:cut]), keep_size=True)))
            for _ in range(min(4, len(span) - 2) if len(span) >= 3 else 0):   # scattered sectors missing
                lost = set(rng.sample(span, rng.randint(1, len(span) - 1)))
                keep = set(span) - lost
                zeros = extends and any((s + 1) * SECTOR > len(before) for s in lost)
                gap = min(lost) < max(keep)
                cls = ("zero-filled-gap" if gap else "zero-filled") if zeros else "torn"
                out.append((cls, torn_write(before, w, keep, keep_size=True)))
        return out


class Folder:
    def __init__(self, entries: dict | None = None):
        self.entries = dict(entries or {})
        self.synced, self.pending = dict(self.entries), []

    def change(self, *updates: tuple[str, int | None]) -> None:
        """One atomic entry change: each (name, node) sets a name, (name, None) removes it."""
        _set(self.entries, updates)
        self.pending.append(updates)

    def sync(self) -> None:
        self.synced, self.pending = dict(self.entries), []

    def variants(self, rng: random.Random) -> list[tuple[str, dict]]:
        out, p = [("as-written", self.entries)], self.pending
        for subset in _subsets(len(p), rng):
            if len(subset) < len(p):
                entries = dict(self.synced)
                for i in subset:
                    _set(entries, p[i])
                out.append(("lost", entries))
        return out


def _set(entries: dict, updates) -> None:
    for name, node in updates:
        if node is None:
            entries.pop(name, None)
        else:
            entries[name] = node


def _subsets(n: int, rng: random.Random):
    """Index subsets of n pending changes: all of them when few, else every prefix and a sample."""
    if n <= MAX_SUBSET_CHANGES:
        for k in range(n + 1):
            yield from itertools.combinations(range(n), k)
        return
    for k in range(n + 1):
        yield tuple(range(k))
    for _ in range(64):
        yield tuple(sorted(rng.sample(range(n), rng.randint(1, n - 1))))


class Model:
    """The files and folders under `root`'s `tops` (e.g. data and state), as the trace changes them."""

    def __init__(self, root: Path, tops=("data", "state")):
        self.root, self.tops = Path(root), tops
        self.nodes: dict[int, File | Folder] = {}
        self.fds: dict[int, int | None] = {}
        self.top = self._new(Folder())
        for name in tops:
            if (self.root / name).is_dir():
                self.nodes[self.top].entries[name] = self._load(self.root / name)
        self.nodes[self.top].sync()

    def _new(self, node) -> int:
        self.nodes[len(self.nodes)] = node
        return len(self.nodes) - 1

    def _load(self, path: Path) -> int:
        if path.is_dir():
            folder = Folder({p.name: self._load(p) for p in sorted(path.iterdir())})
            return self._new(folder)
        return self._new(File(path.read_bytes()))

    def _parent(self, path: str) -> tuple[Folder, str] | None:
        """The folder holding `path` and its last name; None outside the modelled folders."""
        try:
            parts = Path(path).relative_to(self.root).parts
        except ValueError:
            return None
        if not parts or parts[0] not in self.tops:
            return None
        folder = self.nodes[self.top]
        for name in parts[:-1]:
            folder = self.nodes[folder.entries[name]]
        return folder, parts[-1]

    def apply(self, op: tuple) -> None:
        kind = op[0]
        if kind == "open":
            _, fd, flags, path = op
            where = self._parent(path)
            node = self.top if Path(path) == self.root else None
            if where:
                folder, name = where
                node = folder.entries.get(name)
                if node is None and flags & O_CREAT:
                    node = self._new(File())
                    folder.change((name, node))
                elif node is not None and flags & O_TRUNC:
                    self.nodes[node].change(Truncate(0))
            self.fds[fd] = node
        elif kind == "close":
            self.fds.pop(op[1], None)
        elif kind in ("write", "ftruncate", "fsync"):
            node = self.fds.get(op[1])
            if node is None:
                return
            if kind == "fsync":
                self.nodes[node].sync()
            else:
                self.nodes[node].change(Write(op[2], op[3]) if kind == "write" else Truncate(op[2]))
        elif kind in ("rename", "link"):
            source, target = self._parent(op[1]), self._parent(op[2])
            if source is None or target is None:
                assert source is None and target is None, f"{op} crosses the modelled folders"
                return
            node = source[0].entries[source[1]]
            if kind == "rename" and source[0] is target[0]:
                source[0].change((target[1], node), (source[1], None))
            else:
                target[0].change((target[1], node))
                if kind == "rename":
                    source[0].change((source[1], None))
        elif kind == "unlink":
            where = self._parent(op[1])
            if where:
                where[0].change((where[1], None))
        elif kind == "mkdir":
            where = self._parent(op[1])
            if where:
                where[0].change((where[1], self._new(Folder())))

    def tree(self, choice: dict) -> dict[str, bytes | None]:
        """The files (relative path -> bytes) and folders (-> None) reachable with `choice`
        (node -> content or entries) overriding what the nodes hold now."""
        out: dict[str, bytes | None] = {}

        def walk(node: int, prefix: str, seen: frozenset) -> None:
            value = choice.get(node)
            n = self.nodes[node]
            if isinstance(n, File):
                out[prefix] = n.data if value is None else value
                return
            out[prefix] = None
            for name, child in sorted((n.entries if value is None else value).items()):
                if child not in seen:
                    walk(child, f"{prefix}/{name}" if prefix else name, seen | {child})

        walk(self.top, "", frozenset({self.top}))
        out.pop("")
        return out


def crash_states(model: Model, ops: list[tuple], rng: random.Random, combinations: int):
    """Yields (point, class, tree) for every crash state of `ops` run on `model` (the state
    before the first operation): at each point (0 = before the first operation, len(ops) = after
    the last), every single file or folder in each of its variants with the others all persisted
    or all lost, and `combinations` random mixtures."""
    for point in range(len(ops) + 1):
        if point:
            model.apply(ops[point - 1])
        pending = [(i, n.variants(rng)) for i, n in model.nodes.items() if n.pending]
        if not pending:
            yield point, "as-written", model.tree({})
            continue
        lost_all = {i: (model.nodes[i].synced) for i, _ in pending}
        yield point, "lost", model.tree(lost_all)
        yield point, "as-written", model.tree({})
        for i, variants in pending:
            for cls, value in variants:
                yield point, cls, model.tree({i: value})
                yield point, _stronger(cls, "lost") if len(pending) > 1 else cls, model.tree({**lost_all, i: value})
        for _ in range(combinations):
            picks = {i: rng.choice(variants) for i, variants in pending}
            cls = max((c for c, _ in picks.values()), key=CLASSES.index)
            yield point, cls, model.tree({i: v for i, (_, v) in picks.items()})


def _stronger(a: str, b: str) -> str:
    return max(a, b, key=CLASSES.index)


def digest(tree: dict) -> str:
    h = hashlib.sha256()
    for path, content in sorted(tree.items()):
        h.update(path.encode() + b"\0" + (b"D" if content is None else b"F" + hashlib.sha256(content).digest()))
    return h.hexdigest()


def materialize(root: Path, tree: dict, tops=("data", "state")) -> None:
    """Makes the folders `tops` under `root` hold exactly `tree` (folders 0700, files 0600)."""
    for name in tops:
        if (root / name).exists():
            shutil.rmtree(root / name)
    for path, content in sorted(tree.items()):
        target = root / path
        if content is None:
            target.mkdir(mode=0o700)
            os.chmod(target, 0o700)
        else:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(content)
