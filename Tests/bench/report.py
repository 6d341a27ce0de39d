"""The benchmark's Markdown table and its growth curves (gnuplot SVG), from bench.py's results."""
from __future__ import annotations

import subprocess
from pathlib import Path

# (row key, label) in table order; a row with no figure at a size prints its note or "-".
TIME_ROWS = [
    ("version", "`kc --version` (the floor)"),
    ("kdf", "the KDF alone (Argon2id, 1 pass, 8 MiB; libsodium in-process)"),
    ("find", "cold `kc find -w` (whole process)"),
    ("find-beyond-kdf", "cold `kc find -w`, beyond the KDF"),
    ("find-moderate", "cold `kc find -w`, default MODERATE KDF (3 passes, 256 MiB)"),
    ("add", "cold `kc add` (whole process, with its fsync)"),
    ("fsync", "one 200-byte append and fsync alone (in-process, each after a 10 ms pause)"),
    ("add-beyond", "cold `kc add`, beyond the KDF and the fsync"),
    ("list", "cold `kc list --json`"),
    ("update", "cold `kc update --set-comment`"),
    ("delete", "cold `kc delete`"),
    ("check", "`kc check`"),
    ("compact", "`kc compact`"),
    ("find-compacted", "cold `kc find -w` after `kc compact` (records in pages)"),
    ("find-compacted-beyond-kdf", "cold `kc find -w` after `kc compact`, beyond the KDF"),
    ("add-compacted", "cold `kc add` after `kc compact` (with its fsync)"),
    ("add-compacted-beyond", "cold `kc add` after `kc compact`, beyond the KDF and the fsync"),
    ("import", "`kc import netrc` of all the items (one run, one file)"),
    ("export", "`kc export --with-secrets -o FILE` of all the items (one run)"),
    ("import-back", "`kc import json` of that export into a new vault (one run)"),
    ("unlock", "`kc unlock`"),
    ("unlocked-find", "unlocked `kc find -w` (whole process)"),
    ("unlocked-find-beyond", "unlocked `kc find -w`, beyond `kc --version`"),
    ("unlocked-add", "unlocked `kc add` (whole process, with its fsync)"),
    ("unlocked-list", "unlocked `kc list --json`"),
    ("pass", "`pass show` (gpg key without passphrase)"),
    ("secret-tool", "`secret-tool lookup` (gnome-keyring)"),
]
MEMORY_ROWS = [
    ("version", "`kc --version`"), ("find", "cold `kc find -w`"), ("find-moderate", "cold `kc find -w`, MODERATE KDF"),
    ("add", "cold `kc add`"), ("list", "cold `kc list --json`"), ("update", "cold `kc update`"),
    ("delete", "cold `kc delete`"), ("check", "`kc check`"), ("compact", "`kc compact`"),
    ("export", "`kc export --with-secrets`"), ("import-back", "`kc import json` of that export"),
    ("unlocked-find", "unlocked `kc find -w` (client)"), ("agent", "the agent"),
    ("pass", "`pass show` (pass, gpg; gpg-agent not counted)"), ("secret-tool", "`secret-tool lookup` (client)"),
    ("keyring-daemon", "gnome-keyring-daemon (VmHWM)"),
]
PEERS = [("pass", "`pass show`"), ("secret-tool", "`secret-tool lookup`")]
CURVES_TIME = [("version", "kc --version"), ("find", "kc find -w (cold)"), ("unlocked-find", "kc find -w (unlocked)"),
               ("find-moderate", "kc find -w (cold, MODERATE KDF)"), ("add", "kc add (cold)"),
               ("list", "kc list --json (cold)"), ("pass", "pass show"), ("secret-tool", "secret-tool lookup")]
CURVES_MEMORY = [("find", "kc find -w (cold)"), ("agent", "the agent"), ("list", "kc list --json (cold)"), ("compact", "kc compact"),
                 ("pass", "pass show"), ("secret-tool", "secret-tool lookup"), ("keyring-daemon", "gnome-keyring-daemon")]


COLORS = {"version": "#7f7f7f", "find": "#1f77b4", "unlocked-find": "#000000", "agent": "#bcbd22", "find-moderate": "#17becf", "add": "#2ca02c", "list": "#ff7f0e", "compact": "#9467bd",
          "pass": "#d62728", "secret-tool": "#8c564b", "keyring-daemon": "#e377c2"}


def ms(value: float) -> str:
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms"


def cell(stats: dict | None, field: str) -> str:
    if not stats:
        return "-"
    if field in stats:
        return ms(stats[field]) if field == "median_ms" else f"{stats[field] / 1024:.1f} MiB"
    return stats.get("note", "-") if field == "median_ms" else "-"


def machine_line(results: dict) -> str:
    m, v = results["machine"], results["versions"]
    load = lambda avg: ", ".join(f"{x:.2f}" for x in avg)  # noqa: E731
    return (f"Machine: {m['nproc']} cores, {m['cpu']}, Linux {m['kernel']}{', ' + m['os'] if m.get('os') else ''}; "
            f"load average {load(m['loadavg_start'])} at the start, {load(m.get('loadavg_end', []))} at the end. "
            f"{results['date']}; {v['kc']}, {v['hyperfine']}, pass {v['pass']}, {v['gpg']}, {v['secret-tool']}.")


def markdown(results: dict) -> str:
    sizes, rows = results["sizes"], results["rows"]
    head = "| operation | " + " | ".join(f"{s:,} items" for s in sizes) + " |\n|---|" + "---|" * len(sizes) + "\n"
    lines = ["### Time (median of repeated runs)", "", head.rstrip("\n")]
    for key, label in TIME_ROWS:
        lines.append(f"| {label} | " + " | ".join(cell(rows.get(key, {}).get(s), "median_ms") for s in sizes) + " |")
    for (key, label), (kc_key, kc_label) in [(p, k) for k in (("find", "cold"), ("unlocked-find", "unlocked")) for p in PEERS]:
        ratios = []
        for s in sizes:
            peer, kc = rows.get(key, {}).get(s, {}), rows.get(kc_key, {}).get(s, {})
            ratios.append(f"{peer['median_ms'] / kc['median_ms']:.2f}x" if "median_ms" in peer and "median_ms" in kc else "-")
        lines.append(f"| {label} ÷ {kc_label} `kc find -w` (above 1: kc is faster) | " + " | ".join(ratios) + " |")
    lines += ["", "### Peak memory (max RSS of one run)", "", head.rstrip("\n")]
    for key, label in MEMORY_ROWS:
        stats = rows.get(key, {})
        lines.append(f"| {label} | " + " | ".join(cell(stats.get(s), "max_rss_kib") for s in sizes) + " |")
    lines += sync_lines(results.get("sync"))
    lines += ["", machine_line(results),
              "kc vaults use the cheap KDF (Argon2id, 1 pass, 8 MiB) so kc's own cost shows, except the MODERATE row. "
              "Items: internet passwords with a 30-character host, a 30-character account and a 20-character secret; "
              "the one read is in the middle of the vault. Commands with `$$` or `<` run through `sh`, whose start-up "
              "hyperfine subtracts. gnome-keyring holds the items in its in-memory session collection (an unlocked "
              "login keyring is in memory too; storing 10,000 items in it would rewrite its file 10,000 times)."]
    notes = sorted({stats["why"] for key in rows for stats in rows[key].values() if "why" in stats}
                   | set(results["notes"].values()))
    return "\n".join(lines + [f"- {note}" for note in notes]) + "\n"


def sync_lines(sync: dict | None) -> list[str]:
    """The sync rows (syncbench.py): merge, round trip, and the repository's size after many syncs."""
    if not sync:
        return []
    mib = lambda n: f"{n / (1 << 20):.2f} MiB"  # noqa: E731
    lines = ["", "### Sync (release build, local bare repository)", "", "| operation | time or size |", "|---|---|",
             f"| `kc merge-driver`: {sync['records']:,} + {sync['records']:,} new records (median) | {ms(sync['merge']['median_ms'])} |",
             f"| `kc sync` round trip, one edit sent, {sync['records']:,}-item vault (median) | {ms(sync['sync']['median_ms'])} |"]
    for mode, what in (("appending", "no compaction"), ("compacting", "`kc compact` before every {every}th sync")):
        size = sync["repo-size"][mode]
        label = what.format(every=size.get("compact_every"))
        lines.append(f"| repository after {size['rounds']:,} syncs of one edit each, 100-item vault, {label}: as pushed "
                     f"/ after `git gc` / after `git gc --aggressive` (vault {mib(size['vault_bytes'])}; the loop took "
                     f"{size['seconds']:.0f} s) | {mib(size['pushed_bytes'])} / {mib(size['gc_bytes'])} / "
                     f"{mib(size['aggressive_bytes'])} |")
    return lines


def series(rows: dict, key: str, field: str, scale: float) -> str:
    points = sorted((s, stats[field]) for s, stats in rows.get(key, {}).items() if field in stats)
    return "\n".join(f"{s} {v / scale}" for s, v in points)


def plot(results: dict, svg: Path) -> None:
    """Time and peak memory against vault size, log scales, kc cold beside the peers."""
    rows, sizes = results["rows"], results["sizes"]
    blocks, plots = [], {"time": [], "memory": []}
    for panel, curves, field, scale in (("time", CURVES_TIME, "median_ms", 1), ("memory", CURVES_MEMORY, "max_rss_kib", 1024)):
        for index, (key, title) in enumerate(curves):
            data = series(rows, key, field, scale)
            if data:
                name = f"${panel}{index}"
                blocks.append(f"{name} << EOD\n{data}\nEOD")
                dashes = " dt 2" if key in ("pass", "secret-tool", "keyring-daemon") else ""   # the peers dashed
                plots[panel].append(f"{name} using 1:2 with linespoints lw 2 pt 7 lc rgb '{COLORS[key]}'{dashes} "
                                    f"title '{title}'")
    m = results["machine"]
    script = "\n".join(blocks + [
        "set terminal svg size 1100,460 dynamic font 'sans,11' background '#ffffff'",
        f"set output '{svg}'",
        f"set multiplot layout 1,2 title 'kc (cheap KDF, cold and unlocked) beside pass and secret-tool (log scales): {m['nproc']} cores, "
        f"{m['cpu']}, load {m['loadavg_start'][0]:.1f}'",
        "set logscale xy", "set grid", "set key top left font ',9'", "set xlabel 'items in the vault'",
        f"set xrange [{min(sizes) / 2}:{max(sizes) * 2}]",
        "set ylabel 'median time (ms)'", "plot " + ", ".join(plots["time"]),
        "set ylabel 'peak memory (MiB)'", "plot " + ", ".join(plots["memory"]),
        "unset multiplot"])
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
