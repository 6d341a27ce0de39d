"""Watches what a running process and its descendants (or every process) show to other processes
through /proc, looking for secrets.

What /proc shows of a process, and so what can leak through it:
- `cmdline` and `environ`: the argument and environment blocks in the process's memory, as placed
  by exec (and any rewrite in place). A `setenv` after start allocates elsewhere and never shows;
  a child started with a secret in its argv or environment does.
- `comm` of the process and of each thread (`task/*/comm`): names set by prctl or pthread_setname,
  at most 15 bytes.
- `fd/*`: the names of the files it has open.
`Sampler.PLACES` names them; tests print them with their figures.
"""
from __future__ import annotations

import os
import threading
import time

COMM_LENGTH = 15


class Sampler:
    """Reads the places above for a process and all its descendants (`root_pid`), or for every
    process (None), over and over, until stopped. `samples` counts the passes that read the root's
    environment (every pass, for every process); `hits` lists (place, pid) for each needle found;
    `commands` holds every command line seen."""

    PLACES = "cmdline, environ, process and thread names (comm) and open file names (fd)"

    def __init__(self, root_pid: int | None, needles: list[bytes]):
        self.root = root_pid
        self.needles = needles
        self.samples = 0
        self.hits: list[tuple[str, int]] = []
        self.children: set[int] = set()
        self.commands: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self) -> set[int]:
        parents = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat", "rb") as f:
                        fields = f.read().rsplit(b")", 1)[1].split()
                    parents[int(name)] = int(fields[1])
                except (OSError, IndexError, ValueError):
                    pass
        tree = {self.root}
        changed = True
        while changed:
            changed = False
            for pid, ppid in parents.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    changed = True
        return tree

    @staticmethod
    def _read(path: str) -> bytes | None:
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError:
            return None

    def _places(self, pid: int):
        """(place, bytes) for everything of `pid` that other processes can read."""
        for part in ("cmdline", "environ", "comm"):
            data = self._read(f"/proc/{pid}/{part}")
            if data is not None:
                yield part, data
        for folder, name in (("task", "comm"), ("fd", None)):
            try:
                entries = os.listdir(f"/proc/{pid}/{folder}")
            except OSError:
                continue
            for entry in entries:
                if name:
                    data = self._read(f"/proc/{pid}/{folder}/{entry}/{name}")
                else:
                    try:
                        data = os.readlink(f"/proc/{pid}/{folder}/{entry}").encode()
                    except OSError:
                        data = None
                if data is not None:
                    yield f"{folder}/{name or 'link'}", data

    def _found(self, place: str, data: bytes, needle: bytes) -> bool:
        if place.endswith("comm"):
            return needle[:COMM_LENGTH] in data
        return needle in data

    def _pids(self) -> set[int]:
        if self.root is None:
            return {int(name) for name in os.listdir("/proc") if name.isdigit()}
        return self._tree() if self.samples % 5 == 0 else {self.root} | self.children

    def _run(self) -> None:
        while not self._stop.is_set():
            sampled_root = self.root is None
            for pid in self._pids():
                if self.root is not None and pid != self.root:
                    self.children.add(pid)
                for place, data in self._places(pid):
                    sampled_root |= pid == self.root and place == "environ"
                    if place == "cmdline":
                        self.commands.add(data.replace(b"\0", b" ").decode(errors="replace").strip())
                    for needle in self.needles:
                        if self._found(place, data, needle):
                            self.hits.append((place, pid))
            self.samples += sampled_root
            time.sleep(0.0005)

    def stop(self) -> "Sampler":
        self._stop.set()
        self._thread.join()
        return self
