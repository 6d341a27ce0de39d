#!/usr/bin/env python3
"""make bench: the figures kc is measured by (release build, medians of repeated runs).

  start-up             kc --version
  read one secret      kc find internet -s HOST -w, in vaults of 10 and 10,000 items,
                       with a cheap KDF (kc's own cost) and with the default MODERATE KDF
  add one item         kc add into the 10,000-item vault (one locked append + fsync)
  import 10,000        kc import netrc (one batched append)
  check 10,000         kc check
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

KC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/kc")


def median_ms(cmd, env, runs, stdin=None):
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def make_vault(root, name, items, kdf):
    home = os.path.join(root, name)
    os.makedirs(home)
    pw = os.path.join(home, "pw")
    with open(pw, "w") as f:
        f.write("bench password\n")
    os.chmod(pw, 0o600)
    env = dict(os.environ, HOME=home, XDG_DATA_HOME=home + "/data", XDG_STATE_HOME=home + "/state",
               KC_MASTER_PASSWORD_FILE=pw)
    env.pop("KC_VAULT", None)
    subprocess.run([KC, "init", "--kdf-ops", str(kdf[0]), "--kdf-memory", kdf[1]], env=env, check=True,
                   stderr=subprocess.DEVNULL)
    netrc = os.path.join(home, "netrc")
    with open(netrc, "w") as f:
        for i in range(items):
            f.write(f"machine host{i}.example.com login user{i} password secret-{i}\n")
    start = time.perf_counter()
    subprocess.run([KC, "import", "netrc", netrc], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return env, (time.perf_counter() - start) * 1000


def main():
    if not os.access(KC, os.X_OK):
        sys.exit(f"bench: no kc binary at {KC} (run: swift build -c release --product kc)")
    cheap, moderate = (1, "8M"), (3, "256M")
    print(f"kc bench: {KC}")
    print(f"machine: {os.cpu_count()} cores; medians in milliseconds\n")
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as root:
        env, _ = make_vault(root, "start", 0, cheap)
        print(f"{'start-up (kc --version)':<48} {median_ms([KC, '--version'], env, 50):8.1f}")
        rows = []
        for items in (10, 10_000):
            for label, kdf in (("cheap KDF", cheap), ("MODERATE KDF", moderate)):
                env, import_ms = make_vault(root, f"v{items}-{kdf[0]}", items, kdf)
                host = f"host{items - 1}.example.com"
                find = median_ms([KC, "find", "internet", "-s", host, "-w"], env, 15 if kdf == cheap else 7)
                rows.append((f"read one secret, {items:,} items, {label}", find))
                if items == 10_000 and kdf == cheap:
                    rows.append(("import 10,000 items (kc import netrc)", import_ms))
                    add = median_ms([KC, "add", "generic", "-s", "bench", "-U", "--password-stdin"], env, 15, stdin=b"x")
                    rows.append(("add one item to 10,000 (kc add -U)", add))
                    rows.append(("check 10,000 items (kc check)", median_ms([KC, "check"], env, 5)))
        for label, value in rows:
            print(f"{label:<48} {value:8.1f}")


if __name__ == "__main__":
    main()
