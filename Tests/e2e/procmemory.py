"""Where in a running process's memory some bytes are: each mapping's range and whether its pages
are locked (mlock, as libsodium's secure memory is) or ordinary heap and stack. Reads
/proc/PID/maps, smaps and mem (root, or a ptrace-able child)."""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class Hit:
    start: int
    end: int
    name: str
    locked: bool

    def __repr__(self) -> str:
        return f"{self.start:x}-{self.end:x} {self.name or '[anon]'} {'locked' if self.locked else 'NOT LOCKED'}"


def mappings(pid: int) -> list[tuple[int, int, str, bool]]:
    """(start, end, name, wholly locked) of every readable mapping."""
    result = []
    with open(f"/proc/{pid}/smaps") as f:
        current = None
        for line in f:
            head = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)", line)
            if head:
                start, end, permissions, name = int(head[1], 16), int(head[2], 16), head[3], head[4]
                current = [start, end, name, False] if permissions[0] == "r" else None
                if current is not None:
                    result.append(current)
            elif current is not None and line.startswith("Locked:"):
                current[3] = int(line.split()[1]) * 1024 == current[1] - current[0]
    return [tuple(m) for m in result]


def find(pid: int, needle: bytes) -> list[Hit]:
    """Every mapping of `pid` that holds `needle`."""
    hits = []
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:
        for start, end, name, locked in mappings(pid):
            if name in ("[vvar]", "[vsyscall]"):
                continue
            try:
                memory.seek(start)
                data = memory.read(end - start)
            except OSError:
                continue   # guard pages, device mappings
            if needle in data:
                hits.append(Hit(start, end, name, locked))
    return hits
