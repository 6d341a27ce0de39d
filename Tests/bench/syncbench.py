"""The sync rows of `make bench` (Docs/SYNC.md): the merge of two copies that each added RECORDS records
(`kc merge-driver`, as git runs it), one `kc sync` round trip to a local bare repository, and the size of
that repository after ROUNDS syncs, each sending one edit, without compaction and with a `kc compact`
before every 100th sync. RECORDS and ROUNDS are BENCH_SYNC_RECORDS (default 10000) and BENCH_SYNC_ROUNDS
(default 1000); the syncs of the size rows run in one shell loop each (real `kc update` and `kc sync`), the two
loops side by side. The merge and the round trip are medians of BENCH_RUNS runs (default 5)."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from peers import run

COMPACT_EVERY = 100   # at most: every ROUNDS / 2 syncs when ROUNDS is below 200, so a short run compacts too


def import_items(kc: str, env: dict, home: Path, prefix: str, count: int) -> None:
    netrc = home / "netrc"
    for first in range(0, count, 8_000):   # kc reads netrc files of up to 1 MiB
        netrc.write_text("".join(f"machine {prefix}-{i:06d}.example.com login me{i} password pw{i}\n"
                                 for i in range(first, min(count, first + 8_000))))
        run([kc, "import", "netrc", "-r", "https", str(netrc)], env=env)
    netrc.unlink()


def git(*args, env: dict | None = None) -> str:
    return subprocess.run(["git", *map(str, args)], check=True, capture_output=True, text=True, env=env).stdout


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure_sync(bench, make_env, records: int, rounds: int) -> dict:
    """The sync rows: {"merge": stats, "sync": stats, "repo-size": {...}}."""
    kc, work = bench.kc, bench.work / "sync"
    work.mkdir()
    results = {"records": records}
    # Two machines sharing one vault (one item), each adding RECORDS items offline: two copies for the driver.
    a_env, b_env = make_env(work / "a"), make_env(work / "b")
    for env in (a_env, b_env):
        env["GIT_CONFIG_NOSYSTEM"] = "1"
    run([kc, "init", "--kdf-ops", "1", "--kdf-memory", "8M"], env=a_env)
    run(["sh", "-c", f'"{kc}" add generic -s shared --password-stdin < "{bench.pw}"'], env=a_env)
    a_vault, b_vault = work / "a/data/kc/login.kc", work / "b/data/kc/login.kc"
    b_vault.parent.mkdir(parents=True)
    shutil.copyfile(a_vault, b_vault)
    os.chmod(b_vault, 0o600)
    base = work / "base.kc"
    shutil.copyfile(a_vault, base)
    import_items(kc, a_env, work / "a", "a", records)
    import_items(kc, b_env, work / "b", "b", records)
    ours, kept = work / "ours.kc", work / "ours-kept.kc"
    shutil.copyfile(a_vault, kept)
    command = f"{kc} merge-driver {base} {ours} {b_vault} 7 login.kc"
    results["merge"] = bench.measure_command(f"sync-merge-{records}", command, a_env, prepare=f"cp {kept} {ours}")
    # One sync round trip: the first machine, with its RECORDS items, sends one edit to a bare repository.
    remote = work / "remote.git"
    git("init", "-q", "--bare", "-b", "main", remote)
    run([kc, "sync", "init", "--remote", str(remote)], env=a_env)
    edit = f"{kc} update generic -s shared --password-stdin < {bench.pw}"
    results["sync"] = bench.measure_command(f"sync-round-trip-{records}", f"{kc} sync", a_env, prepare=edit, shell=True)
    # the two loops measure sizes, not times: they run side by side
    with ThreadPoolExecutor(2) as pool:
        sizes = {mode: pool.submit(repository_size, bench, make_env, work / mode, rounds, mode == "compacting")
                 for mode in ("appending", "compacting")}
        results["repo-size"] = {mode: future.result() for mode, future in sizes.items()}
    shutil.rmtree(work)
    return results


def repository_size(bench, make_env, home: Path, rounds: int, compact: bool) -> dict:
    """A new vault of 100 items synced to a new bare repository, then ROUNDS syncs each sending one edit
    (with `kc compact` before every 100th when `compact`): the repository's size on disk as the pushes
    left it (loose objects: fewer than 100 a push are not kept packed), after `git gc` and after
    `git gc --aggressive`."""
    kc, every = bench.kc, min(COMPACT_EVERY, max(1, rounds // 2))
    env = make_env(home)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    run([kc, "init", "--kdf-ops", "1", "--kdf-memory", "8M"], env=env)
    import_items(kc, env, home, "item", 100)
    remote = home / "remote.git"
    git("init", "-q", "--bare", "-b", "main", remote)
    run([kc, "sync", "init", "--remote", str(remote)], env=env)
    loop = (f'i=0; while [ $i -lt {rounds} ]; do i=$((i+1)); '
            + (f'[ $((i % {every})) -eq 0 ] && {{ "{kc}" compact >/dev/null || exit 1; }}; ' if compact else '')
            + f'echo "pw$i" | "{kc}" update internet -s item-000042.example.com -a me42 --password-stdin || exit 1; '
            + f'"{kc}" sync >/dev/null || exit 1; done')
    start = time.perf_counter()
    run(["sh", "-c", loop], env=env)
    elapsed = time.perf_counter() - start
    pushed = folder_bytes(remote / "objects")
    git("-C", remote, "gc", "-q")
    packed = folder_bytes(remote / "objects")
    git("-C", remote, "gc", "-q", "--aggressive")   # a wider delta search: git's default window misses
    aggressive = folder_bytes(remote / "objects")   # most deltas across the rewrites of compactions
    commits = int(git("-C", remote, "rev-list", "--count", "main").strip())
    vault = (home / "data/kc/login.kc").stat().st_size
    return {"rounds": rounds, "compact_every": every if compact else None, "commits": commits, "pushed_bytes": pushed,
            "gc_bytes": packed, "aggressive_bytes": aggressive, "vault_bytes": vault, "seconds": elapsed}
