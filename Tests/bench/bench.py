#!/usr/bin/env python3
"""make bench: kc's speed and peak memory beside pass and secret-tool, with the same items, in one run.

For each vault size (BENCH_SIZES, default 1000,10000,100000) it builds a kc vault (`kc import netrc` of one
file, one batched append; the cheap KDF, 1 pass of 8 MiB, so that kc's own cost shows), a pass store and a
gnome-keyring with the same items, and measures with hyperfine (warm-up, repeated runs, medians) every
row of ROWS, and the peak memory (max RSS, /usr/bin/time) of each command once. It also measures the
KDF alone and one fsync alone (in this process) to print kc's cost beyond them, and a cold `kc find -w`
with the default MODERATE KDF at one size, and kc's round trip (`kc export --with-secrets` of the whole
vault, then `kc import json` of that file into a new vault; no peer has one to compare). The unlocked rows run with an agent started by `kc unlock`
and without the master-password file, so only the agent can answer them; the agent's own peak memory
(VmHWM) is read from /proc once they ran.

Writes bench/results/bench-TIME.{json,md,svg} and bench/results/latest.{json,md,svg} (or --out DIR).
Environment: BENCH_SIZES, BENCH_RUNS (runs per row; default 30, 5 at 100,000 items; 60 for the rows of a few milliseconds that
             decide the ratios to the peers), BENCH_WARMUP,
BENCH_PASS_MAX and BENCH_SECRET_TOOL_MAX (largest size the peers are built for, default 10000 and 1000),
BENCH_SYNC_RECORDS and BENCH_SYNC_ROUNDS (the sync rows, syncbench.py).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import re
import secrets
import shutil
import signal
import statistics
import string
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import Keyring, PassStore, run, secret_tool_unavailable  # noqa: E402
from report import markdown, plot  # noqa: E402
from syncbench import measure_sync  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CHEAP_KDF = ("1", "8M")
MODERATE_SIZE = 10_000        # the size at which the default KDF is measured (or the largest below)
PASSWORD = "bench-Master-password-on-a-quiet-Machine-7"   # strong: kc init refuses a weak one without a terminal


@dataclass
class Row:
    """One measured operation. `argv` is run with hyperfine (through `sh` when `shell`, whose start-up
    hyperfine subtracts); `{host}` and `{account}` name an item in the middle of the vault, `{pw}` a
    file holding a secret. `prepare` runs untimed before each run. `agent` rows are served by the unlock agent."""
    key: str
    label: str
    argv: list[str]
    shell: bool = False
    prepare: str | None = None
    agent: bool = False
    peer: str | None = None       # "pass" or "secret-tool": measured only where that peer was built


ROWS = [
    Row("version", "`kc --version` (the floor)", ["{kc}", "--version"]),
    Row("find", "cold `kc find -w`", ["{kc}", "find", "internet", "-s", "{host}", "-a", "{account}", "-w"]),
    Row("add", "cold `kc add` (with its fsync)",
        ["{kc}", "add", "internet", "-s", "new.example.com", "-a", "user$$", "--password-stdin", "<", "{pw}"],
        shell=True),
    Row("list", "cold `kc list --json`", ["{kc}", "list", "--json"]),
    Row("update", "cold `kc update --set-comment`",
        ["{kc}", "update", "internet", "-s", "{host}", "-a", "{account}", "--set-comment", "c$$"], shell=True),
    Row("delete", "cold `kc delete`", ["{kc}", "delete", "generic", "-s", "bench-delete"],
        shell=True, prepare="{kc} add generic -s bench-delete -U --password-stdin < {pw}"),
    Row("check", "`kc check`", ["{kc}", "check"]),
    Row("compact", "`kc compact`", ["{kc}", "compact"]),
    # The vault as `kc compact` left it: its records sealed many to a page (Docs/FORMAT.md, "Pages").
    Row("find-compacted", "cold `kc find -w` after `kc compact`",
        ["{kc}", "find", "internet", "-s", "{host}", "-a", "{account}", "-w"]),
    Row("add-compacted", "cold `kc add` after `kc compact` (with its fsync)",
        ["{kc}", "add", "internet", "-s", "new.example.com", "-a", "compacted$$", "--password-stdin", "<", "{pw}"],
        shell=True),
    # A fresh agent each run: `kc lock` before, so the agent's spawn and the KDF are in it.
    Row("unlock", "`kc unlock`", ["{kc}", "unlock"], prepare="{kc} lock", agent=True),
    # Served by the agent: run without the master-password file, so the slow path would fail.
    Row("unlocked-find", "unlocked `kc find -w`", ["{kc}", "find", "internet", "-s", "{host}", "-a", "{account}", "-w"],
        agent=True),
    Row("unlocked-add", "unlocked `kc add` (with its fsync)",
        ["{kc}", "add", "internet", "-s", "new.example.com", "-a", "unlocked$$", "--password-stdin", "<", "{pw}"],
        shell=True, agent=True),
    Row("unlocked-list", "unlocked `kc list --json`", ["{kc}", "list", "--json"], agent=True),
    Row("pass", "`pass show` (gpg key without passphrase)", ["pass", "show", "{host}/{account}"], peer="pass"),
    Row("secret-tool", "`secret-tool lookup` (gnome-keyring)",
        ["secret-tool", "lookup", "server", "{host}", "user", "{account}"], peer="secret-tool"),
]


# Rows of a few milliseconds, whose medians decide the ratios to the peers: many runs cost under a
# second and keep one slow run (another process waking up) from moving the median.
FAST_ROWS = {"version", "unlocked-find", "pass", "secret-tool"}


def sh_quote(word: str) -> str:
    return word if word in ("<", "|") or "$$" in word or all(c.isalnum() or c in "-_./=:@" for c in word) \
        else "'" + word.replace("'", "'\\''") + "'"


class Bench:
    def __init__(self, kc: str, work: Path, runs: int | None, warmup: int | None):
        self.kc, self.work, self.runs, self.warmup = kc, work, runs, warmup
        self.pw = work / "item-secret"
        self.pw.write_text("a new secret, 24 chars..")

    # -- measuring -------------------------------------------------------------------------------
    def hyperfine(self, name: str, command: str, env: dict, shell: bool, runs: int, warmup: int,
                  prepare: str | None = None) -> dict:
        out = self.work / f"hf-{name}.json"
        argv = ["hyperfine", "--style", "none", "--runs", str(runs), "--warmup", str(warmup),
                "--export-json", str(out)] + ([] if shell else ["-N"]) + \
               (["--prepare", prepare] if prepare else []) + [command]
        run(argv, env=env)
        result = json.loads(out.read_text())["results"][0]
        times = [t * 1000 for t in result["times"]]
        return {"median_ms": statistics.median(times), "mean_ms": result["mean"] * 1000,
                "stddev_ms": (result["stddev"] or 0) * 1000, "min_ms": min(times), "max_ms": max(times),
                "runs": len(times), "times_ms": times}

    def measure_command(self, name: str, command: str, env: dict, prepare: str | None = None, shell: bool = False) -> dict:
        """A command outside ROWS (the sync rows): BENCH_RUNS runs (default 5) after BENCH_WARMUP (default 1)."""
        return self.hyperfine(name, command, env, shell, self.runs or 5, 1 if self.warmup is None else self.warmup, prepare)

    def max_rss_kib(self, command: str, env: dict, prepare: str | None) -> int:
        if prepare:
            run(["sh", "-c", prepare], env=env)
        out = self.work / "rss"
        run(["/usr/bin/time", "-f", "%M", "-o", str(out), "sh", "-c", command], env=env)
        return int(out.read_text().split()[-1])

    def measure(self, row: Row, size: int, env: dict, fill: dict) -> dict:
        command = " ".join(sh_quote(w.format(**fill)) for w in row.argv)
        prepare = row.prepare.format(**fill) if row.prepare else None
        runs = self.runs or (5 if size >= 100_000 else 30)
        warmup = self.warmup if self.warmup is not None else (1 if size >= 100_000 else 2)
        if row.key in FAST_ROWS and self.runs is None:
            runs, warmup = 60, max(warmup, 5)
        stats = self.hyperfine(f"{row.key}-{size}", command, env, row.shell, runs, warmup, prepare)
        stats["max_rss_kib"] = self.max_rss_kib(command, env, prepare)
        stats["command"] = command
        return stats


# -- the items and the stores ------------------------------------------------------------------------
def make_items(size: int) -> list[tuple[str, str, str]]:
    """Realistic attribute sizes: a 20-35 character host, a 20-30 character e-mail account, a 20
    character random password."""
    alphabet = string.ascii_letters + string.digits
    words = ["mail", "login", "git", "files", "shop", "bank", "cloud", "api", "forum", "news"]
    return [(f"{words[i % 10]}.service-{i:06d}.example.com", f"firstname.lastname{i}@example.org",
             "".join(secrets.choice(alphabet) for _ in range(20))) for i in range(size)]


def agent_peak_kib(kc: str, env: dict) -> int:
    """The running agent's peak resident memory (VmHWM), found through `kc status --json`."""
    status = json.loads(subprocess.run([kc, "status", "--json"], env=env, capture_output=True, text=True).stdout)
    for line in Path(f"/proc/{status['pid']}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise SystemExit("bench: the agent's /proc status has no VmHWM")


def kc_env(home: Path) -> dict:
    home.mkdir(parents=True)
    # The agent's socket folder: short, as a socket path must fit in 108 bytes.
    runtime = Path(tempfile.mkdtemp(prefix="kc-bench-run-"))
    pw = home / "master"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_STATE_HOME=str(home / "state"),
               XDG_CONFIG_HOME=str(home / "config"), XDG_RUNTIME_DIR=str(runtime), KC_MASTER_PASSWORD_FILE=str(pw))
    env.pop("KC_VAULT", None)
    return env


def make_kc_vault(kc: str, home: Path, items, kdf: tuple[str, str] | None) -> tuple[dict, float]:
    env = kc_env(home)
    run([kc, "init"] + (["--kdf-ops", kdf[0], "--kdf-memory", kdf[1]] if kdf else []), env=env)
    if not (home / "data/kc/login.kc").is_file():
        raise SystemExit(f"bench: kc did not create its vault under {home}")
    netrc = home / "netrc"
    netrc.write_text("".join(f"machine {h} login {a} password {p}\n" for h, a, p in items))
    start = time.perf_counter()
    run([kc, "import", "netrc", "-r", "https", str(netrc)], env=env)   # one file, one append
    elapsed = (time.perf_counter() - start) * 1000
    netrc.unlink()
    return env, elapsed


def round_trip(kc: str, work: Path, size: int, env: dict) -> dict:
    """kc's own round trip at one size: `kc export --with-secrets` of the vault to a file, then `kc import
    json` of that file into a new vault (the cheap KDF), one run each, its time and peak memory from
    /usr/bin/time; the file's size. The two vaults' items are compared, so a lossy round trip fails."""
    export = work / f"export-{size}.json"
    target = kc_env(work / f"kc-import-{size}")
    run([kc, "init", "--kdf-ops", CHEAP_KDF[0], "--kdf-memory", CHEAP_KDF[1]], env=target)
    result = {}
    for key, argv, where in (("export", [kc, "export", "--with-secrets", "--yes", "-o", str(export)], env),
                             ("import-back", [kc, "import", "json", str(export)], target)):
        out = work / "time"
        run(["/usr/bin/time", "-f", "%e %M", "-o", str(out)] + argv, env=where)
        seconds, rss = out.read_text().split()[-2:]
        result[key] = {"median_ms": float(seconds) * 1000, "runs": 1, "max_rss_kib": int(rss)}
        if not export.is_file():
            raise SystemExit(f"bench: `kc export --with-secrets -o {export}` wrote no file")
    result["export-size"] = {"bytes": export.stat().st_size}
    if run([kc, "export"], env=env).stdout != run([kc, "export"], env=target).stdout:
        raise SystemExit(f"bench: the round trip of {size:,} items changed them")
    export.unlink()
    shutil.rmtree(work / f"kc-import-{size}")
    shutil.rmtree(target["XDG_RUNTIME_DIR"], ignore_errors=True)
    return result


# -- what kc's rows are measured against ----------------------------------------------------------------
def kdf_ms(ops: int, memory: int, runs: int = 31) -> float:
    """Median wall time of libsodium's Argon2id with kc's cheap parameters, in this process."""
    sodium = ctypes.CDLL("libsodium.so.23")
    sodium.sodium_init()
    out, salt = ctypes.create_string_buffer(32), ctypes.create_string_buffer(16)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        rc = sodium.crypto_pwhash(out, ctypes.c_ulonglong(32), PASSWORD.encode(), ctypes.c_ulonglong(len(PASSWORD)),
                                  salt, ctypes.c_ulonglong(ops), ctypes.c_size_t(memory), 2)   # ALG_ARGON2ID13
        samples.append((time.perf_counter() - start) * 1000)
        assert rc == 0, "crypto_pwhash failed"
    return statistics.median(samples)


def fsync_ms(folder: Path, runs: int = 31) -> float:
    """Median wall time of appending one 200-byte record to a file in `folder` and fsyncing it, each after
    a 10 ms pause, as a kc command meets its one fsync: fsyncs issued back to back wait less for the disk
    (0.11 against 0.18 ms on the development machine), which would charge part of the fsync to kc."""
    fd = os.open(folder / "fsync-probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    samples = []
    try:
        for _ in range(runs):
            time.sleep(0.01)
            start = time.perf_counter()
            os.write(fd, b"x" * 200)
            os.fsync(fd)
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        os.close(fd)
        os.unlink(folder / "fsync-probe")
    return statistics.median(samples)


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor() or "unknown")
    return {"nproc": os.cpu_count(), "cpu": cpu, "kernel": platform.release(),
            "os": platform.freedesktop_os_release().get("PRETTY_NAME", "") if hasattr(platform, "freedesktop_os_release") else "",
            "loadavg_start": list(os.getloadavg())}


def versions(kc: str) -> dict:
    def first_line(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            return "not installed"
    pass_version = re.search(r"v\d+(\.\d+)+", subprocess.run(["pass", "version"], capture_output=True, text=True)
                             .stdout) if shutil.which("pass") else None
    return {"kc": first_line([kc, "--version"]), "hyperfine": first_line(["hyperfine", "--version"]),
            "pass": pass_version.group(0) if pass_version else "not installed", "gpg": first_line(["gpg", "--version"]),
            "secret-tool": "libsecret-tools " + first_line(["dpkg-query", "-W", "-f", "${Version}\\n", "libsecret-tools"])}


def measure_rows(bench: Bench, size: int, items: list, env: dict, agent_env: dict, fill: dict, results: dict,
                 peers: dict) -> None:
    """Every row of ROWS at one size: kc's cold rows, `kc unlock` and the rows its agent serves, the peers."""
    rows, kc = results["rows"], bench.kc
    say = lambda text: print(f"bench: {size:,} items: {text}", file=sys.stderr, flush=True)  # noqa: E731
    for row in ROWS:
        cells = rows.setdefault(row.key, {})
        if row.agent:
            say(row.key)
            cells[size] = bench.measure(row, size, env if row.key == "unlock" else agent_env, fill)
            if row.key == "unlock":
                run([kc, "unlock"], env=env)       # the agent the unlocked rows use
            continue
        if row.peer:
            cells[size] = peers[row.peer](size, items, fill) if row.peer in peers else {"note": results["notes"][row.peer]}
            continue
        say(row.key)
        cells[size] = bench.measure(row, size, env, fill)


def measure_size(bench: Bench, size: int, results: dict, peers: dict) -> None:
    """Every row at one vault size, into results["rows"][key][size]."""
    rows, work, kc = results["rows"], bench.work, bench.kc
    say = lambda text: print(f"bench: {size:,} items: {text}", file=sys.stderr, flush=True)  # noqa: E731
    items = make_items(size)
    host, account = items[size // 2][:2]
    fill = {"kc": kc, "host": host, "account": account, "pw": str(bench.pw)}
    env, import_ms = make_kc_vault(kc, work / f"kc-{size}", items, CHEAP_KDF)
    rows.setdefault("import", {})[size] = {"median_ms": import_ms, "runs": 1}
    rows.setdefault("kdf", {})[size] = {"median_ms": kdf_ms(int(CHEAP_KDF[0]), 8 << 20)}
    rows.setdefault("fsync", {})[size] = {"median_ms": fsync_ms(work / f"kc-{size}")}
    agent_env = {k: v for k, v in env.items() if k != "KC_MASTER_PASSWORD_FILE"}
    try:
        measure_rows(bench, size, items, env, agent_env, fill, results, peers)
        rows.setdefault("agent", {})[size] = {"max_rss_kib": agent_peak_kib(kc, env)}
    finally:
        subprocess.run([kc, "lock"], env=env, capture_output=True)   # never leave an agent behind
        shutil.rmtree(env["XDG_RUNTIME_DIR"], ignore_errors=True)
    say("export and import back")
    for key, stats in round_trip(kc, work, size, env).items():
        rows.setdefault(key, {})[size] = stats
    shutil.rmtree(work / f"kc-{size}")
    rows.setdefault("unlocked-find-beyond", {})[size] = {
        "median_ms": rows["unlocked-find"][size]["median_ms"] - rows["version"][size]["median_ms"]}
    for prefix in ("", "-compacted"):
        find, add = rows["find" + prefix][size]["median_ms"], rows["add" + prefix][size]["median_ms"]
        rows.setdefault(f"find{prefix}-beyond-kdf", {})[size] = {"median_ms": find - rows["kdf"][size]["median_ms"]}
        rows.setdefault(f"add{prefix}-beyond", {})[size] = {
            "median_ms": add - rows["kdf"][size]["median_ms"] - rows["fsync"][size]["median_ms"]}
    moderate = max([s for s in results["sizes"] if s <= MODERATE_SIZE] or [min(results["sizes"])])
    if size == moderate:
        say("find with the default MODERATE KDF")
        env, _ = make_kc_vault(kc, work / f"kc-moderate-{size}", items, None)
        row = next(r for r in ROWS if r.key == "find")
        saved = bench.runs
        bench.runs = min(bench.runs or 5, 5)
        rows.setdefault("find-moderate", {})[size] = bench.measure(row, size, env, fill)
        bench.runs = saved
        shutil.rmtree(work / f"kc-moderate-{size}")
        shutil.rmtree(env["XDG_RUNTIME_DIR"])


def peer_measurers(bench: Bench, results: dict, pass_max: int, secret_max: int) -> tuple[dict, list]:
    """The functions that build and measure each peer at a size, and what to close at the end."""
    notes, closers, work = results["notes"], [], bench.work
    measurers = {}
    cost = {}
    if shutil.which("pass") and shutil.which("gpg"):
        store = PassStore()
        closers.append(store.close)

        def measure_pass(size, items, fill):
            if size > pass_max:
                per_entry = cost.get("pass", 4.0)
                return {"note": "not measured (below)",
                        "why": f"`pass show` is not measured at {size:,} items: building the store takes one public-key "
                               f"encryption per entry ({per_entry:.1f} ms each here, so {size * per_entry / 60000:.0f} min)."}
            print(f"bench: {size:,} items: pass store", file=sys.stderr, flush=True)
            start = time.perf_counter()
            env = store.build(work / f"pass-{size}", items)
            cost["pass"] = (time.perf_counter() - start) * 1000 / size
            row = next(r for r in ROWS if r.key == "pass")
            stats = bench.measure(row, size, env, fill)
            shutil.rmtree(work / f"pass-{size}")
            return stats
        measurers["pass"] = measure_pass
    else:
        notes["pass"] = "not available: pass or gpg is not installed"
    reason = secret_tool_unavailable()
    if reason:
        notes["secret-tool"] = reason
    else:
        def measure_secret_tool(size, items, fill):
            if size > secret_max:
                return {"note": "not measured (below)",
                        "why": f"`secret-tool lookup` is not measured beyond {secret_max:,} items: gnome-keyring slows "
                               "as it fills (1,000 items are stored in a few seconds; 10,000 did not finish in 4 "
                               "minutes in a trial here)."}
            print(f"bench: {size:,} items: gnome-keyring", file=sys.stderr, flush=True)
            keyring = Keyring(work / f"keyring-{size}", items)
            try:
                row = next(r for r in ROWS if r.key == "secret-tool")
                stats = bench.measure(row, size, keyring.env, fill)
                results["rows"].setdefault("keyring-daemon", {})[size] = {"max_rss_kib": keyring.daemon_rss_kib()}
            finally:
                keyring.close()
            shutil.rmtree(work / f"keyring-{size}")
            return stats
        measurers["secret-tool"] = measure_secret_tool
    notes["round-trip"] = ("The round trip (`kc export --with-secrets`, then `kc import json` into a new vault) has no "
                           "peer row: pass has no export or import of its own (each entry is a gpg file), nor has "
                           "secret-tool (gnome-keyring).")
    return measurers, closers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kc", nargs="?", default=str(REPO / ".build/release/kc"))
    parser.add_argument("--out", default=str(REPO / "bench/results"), help="folder for the results")
    args = parser.parse_args()
    kc = os.path.abspath(args.kc)
    if not os.access(kc, os.X_OK):
        sys.exit(f"bench: no kc binary at {kc} (run: make release)")
    for tool in ("hyperfine", "/usr/bin/time", "gnuplot"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is missing (make bench installs it)")
    env = os.environ
    sizes = [int(s) for s in env.get("BENCH_SIZES", "1000,10000,100000").split(",")]
    runs = int(env["BENCH_RUNS"]) if env.get("BENCH_RUNS") else None
    warmup = int(env["BENCH_WARMUP"]) if env.get("BENCH_WARMUP") else None
    out = Path(args.out).resolve()   # kc ignores a relative XDG_DATA_HOME (and would use the real home)
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(mode=0o700)
    results = {"machine": machine(), "versions": versions(kc), "sizes": sizes, "rows": {}, "notes": {},
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "kdf": {"cheap": "Argon2id, 1 pass, 8 MiB", "moderate": "Argon2id, 3 passes, 256 MiB (kc's default)"}}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # stop the peers' daemons on the way out
    bench = Bench(kc, work, runs, warmup)
    measurers, closers = peer_measurers(bench, results, int(env.get("BENCH_PASS_MAX", 10_000)),
                                        int(env.get("BENCH_SECRET_TOOL_MAX", 1_000)))
    try:
        for size in sizes:
            measure_size(bench, size, results, measurers)
        print("bench: sync", file=sys.stderr, flush=True)
        results["sync"] = measure_sync(bench, kc_env, int(env.get("BENCH_SYNC_RECORDS", 10_000)),
                                       int(env.get("BENCH_SYNC_ROUNDS", 1_000)))
    finally:
        for close in closers:
            close()
        shutil.rmtree(work, ignore_errors=True)
    results["machine"]["loadavg_end"] = list(os.getloadavg())
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    table = markdown(results)
    for name in (f"bench-{stamp}", "latest"):
        (out / f"{name}.json").write_text(json.dumps(results, indent=1) + "\n")
        (out / f"{name}.md").write_text(table)
    plot(results, out / "latest.svg")
    shutil.copyfile(out / "latest.svg", out / f"bench-{stamp}.svg")
    print(table)
    print(f"bench: wrote {out}/latest.json, latest.md and latest.svg (and bench-{stamp}.*)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
