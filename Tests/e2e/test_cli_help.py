"""help, --version, the generated man page and shell completions, from the built binary."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kcharness import EXIT_NOT_AVAILABLE, EXIT_PARAM, assert_failure

REPO = Path(__file__).resolve().parents[2]
VISIBLE = ["init", "add generic", "add internet", "find", "find generic", "find internet", "update generic",
           "update internet", "delete generic", "delete internet", "list", "completions", "help"]


def test_help_lists_commands_and_global_options(kc):
    text = kc.ok(["help"]).stdout
    for name in VISIBLE:
        base, _, kind = name.partition(" ")
        # a command of either class stands for its class forms: "update [generic|internet]"
        folded = kind in ("generic", "internet") and f"\n  {base} [" in text
        assert (f"\n  {base} [" in text and kind in text.split(f"\n  {base} [")[1].split("]")[0]) if folded \
            else (f"\n  {name} " in text), name
    assert len(text.splitlines()) <= 120, "kc help should stay short enough to read"
    for option in ["--vault PATH", "--master-password-fd N", "--lock-timeout SECONDS", "--version", "-h, --help"]:
        assert option in text
    assert "__man" not in text
    assert kc.ok(["--help"]).stdout == text


@pytest.mark.parametrize("words", [["add", "generic"], ["find"], ["update", "internet"], ["list"], ["init"]])
def test_command_help_three_ways(kc, words):
    via_help = kc.ok(["help", *words]).stdout
    assert via_help.startswith(f"kc {' '.join(words)}: ")
    assert "Usage: kc " + " ".join(words) in via_help
    assert kc.ok([*words, "--help"]).stdout == via_help
    assert kc.ok([*words, "-h"]).stdout == via_help


def test_group_help(kc):
    text = kc.ok(["help", "add"]).stdout
    assert "add generic" in text and "add internet" in text
    assert kc.ok(["add", "--help"]).stdout == text


def test_help_for_unknown_topic(kc):
    result = kc.run(["help", "updte"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert result.hint == "did you mean 'kc help update'?"


def test_version(kc):
    result = kc.ok(["--version"])
    assert result.stdout.startswith("kc ") and result.stdout.count("\n") == 1
    assert kc.ok(["list", "--version"]).stdout == result.stdout


def test_man_page_and_completions_match_committed_files(kc):
    assert kc.ok(["__man"]).stdout == (REPO / "Docs" / "kc.1").read_text()
    for shell, name in [("bash", "kc.bash"), ("zsh", "_kc"), ("fish", "kc.fish")]:
        assert kc.ok(["completions", shell]).stdout == (REPO / "completions" / name).read_text(), shell
    result = kc.run(["completions", "tcsh"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert result.hint == "choose one of: bash, zsh, fish"
    assert_failure(kc.run(["completions"]), "errSecParam", EXIT_PARAM)


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_man_page_renders(kc, tmp_path):
    page = tmp_path / "kc.1"
    page.write_text(kc.ok(["__man"]).stdout)
    rendered = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True,
                              env={"MANWIDTH": "80", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    assert rendered.returncode == 0, rendered.stderr
    for heading in ["SYNOPSIS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES", "errSecItemNotFound"]:
        assert heading in rendered.stdout


def bash_complete(script: Path, line: list[str]) -> list[str]:
    words = " ".join(f"'{w}'" for w in line)
    program = f"source '{script}'; COMP_WORDS=({words}); COMP_CWORD={len(line) - 1}; _kc; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    result = subprocess.run(["bash", "-c", program], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_bash_completion(kc, tmp_path):
    script = tmp_path / "kc.bash"
    script.write_text(kc.ok(["completions", "bash"]).stdout)
    assert "add" in bash_complete(script, ["kc", "a"])
    assert bash_complete(script, ["kc", "add", "g"]) == ["generic"]
    assert bash_complete(script, ["kc", "--vault", "x", "find", "i"]) == ["internet"]
    assert "--protocol" in bash_complete(script, ["kc", "add", "internet", "-s", "host", "--pro"])
    assert "--generic" not in bash_complete(script, ["kc", "add", "internet", "--g"])
    assert bash_complete(script, ["kc", "add", "internet", "-r", "ftp"]) == ["ftp", "ftps"]
    assert "__man" not in bash_complete(script, ["kc", "_"])
    assert bash_complete(script, ["kc", "compl"]) == ["completions"]
    words = [w for w in bash_complete(script, ["kc", "completions", ""]) if not w.startswith("-")]
    assert words == ["bash", "zsh", "fish"]
    assert bash_complete(script, ["kc", "completions", "f"]) == ["fish"]
    assert bash_complete(script, ["kc", "sea"]) == ["search"]
    assert bash_complete(script, ["kc", "search", "git", "--class", ""]) == ["generic", "internet"]
    assert "--json" in bash_complete(script, ["kc", "search", "--"])


@pytest.mark.parametrize("shell,flag", [("zsh", "-n"), ("fish", "--no-execute")])
def test_other_completions_parse(kc, tmp_path, shell, flag):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    name = {"zsh": "_kc", "fish": "kc.fish"}[shell]
    script = tmp_path / name
    script.write_text(kc.ok(["completions", shell]).stdout)
    result = subprocess.run([shell, flag, str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


ZSH_CAPTURE = r'''
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT='> '"
zpty -w z "fpath=($DIR \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd () { builtin compadd -O __m "$@"; print -l -- "MATCH:${^__m[@]}" >> $DIR/out; builtin compadd "$@" }'
zpty -w z "$LINE"$'\t'
for i in {1..200}; do [[ -s $DIR/out ]] && break; sleep 0.05; done
sleep 0.3
zpty -d z
'''


def zsh_matches(tmp_path, completion: str, line: str, env: dict | None = None) -> set:
    """The words zsh offers for `line` with `completion` as the _kc function (`env` added to
    the shell's environment)."""
    (tmp_path / "_kc").write_text(completion)
    (tmp_path / "out").unlink(missing_ok=True)
    script = tmp_path / "capture.zsh"
    script.write_text(ZSH_CAPTURE)
    subprocess.run(["zsh", "-f", str(script)], env={"DIR": str(tmp_path), "LINE": line, "PATH": "/usr/bin:/bin",
                                                    "HOME": str(tmp_path), **(env or {})}, capture_output=True, timeout=30)
    return {m[len("MATCH:"):] for m in (tmp_path / "out").read_text().split() if m.startswith("MATCH:")} \
        if (tmp_path / "out").exists() else set()


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
@pytest.mark.parametrize("line,expected,absent", [
    ("kc add g", "generic", None),
    ("kc add internet --", "--protocol", "--generic"),   # "--" so that a wrong --generic would match
    ("kc find generic --js", "--json", None),
    ("kc comp", "completions", None),
    ("kc completions z", "zsh", None),
    ("kc completions ", "fish", "--json"),
    ("kc search git --cl", "--class", None),
    ("kc search --class i", "internet", None),
    ("kc add internet -r ft", "ftps", None),
    ("kc --lock-timeout 5 find i", "internet", None),
])
def test_zsh_completion(kc, tmp_path, line, expected, absent):
    matches = zsh_matches(tmp_path, kc.ok(["completions", "zsh"]).stdout, line)
    assert expected in matches, matches
    if absent:
        assert absent not in matches


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_capture_sees_a_wrong_offer(tmp_path):
    """Control: a completion that wrongly offers --generic after `kc add internet` is caught."""
    wrong = "#compdef kc\ncompadd -- --generic --json --protocol\n"
    assert "--generic" in zsh_matches(tmp_path, wrong, "kc add internet --")


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion(kc, tmp_path):
    script = tmp_path / "kc.fish"
    script.write_text(kc.ok(["completions", "fish"]).stdout)

    def complete(line):
        result = subprocess.run(["fish", "-c", f"source {script}; complete -C '{line}'"], capture_output=True, text=True)
        return [entry.split("\t")[0] for entry in result.stdout.splitlines()]

    assert set(complete("kc add ")) >= {"generic", "internet"}
    assert "--protocol" in complete("kc add internet --pro")
    assert "--generic" not in complete("kc add internet --")
    assert "--json" in complete("kc --vault x find generic --j")
    assert "completions" in complete("kc comp")
    assert set(complete("kc completions ")) == {"bash", "zsh", "fish"}
    assert "search" in complete("kc sea")
    assert set(complete("kc search git --class ")) == {"generic", "internet"}


def test_kc_alone_without_a_vault_says_so_in_at_most_five_lines(kc):
    result = kc.ok([])
    lines = result.stdout.splitlines()
    assert 1 <= len(lines) <= 5, result
    assert f"no vault yet at {kc.vault_path}" in result.stdout
    assert "kc init" in result.stdout and "kc help" in result.stdout
    assert not kc.vault_path.exists(), "kc alone creates nothing"


def test_kc_alone_with_a_vault_prints_a_short_usage(kc_ready):
    result = kc_ready.ok([])
    lines = result.stdout.splitlines()
    assert len(lines) <= 12, result
    assert lines[0].startswith("Usage: kc ") and "no vault" not in result.stdout
    assert "kc help" in result.stdout
    other = kc_ready.ok(["--vault", str(kc_ready.home / "elsewhere.kc")]).stdout
    assert f"no vault yet at {kc_ready.home / 'elsewhere.kc'}" in other, "the vault the global options name"


GROUPS = ["Items", "Lookup", "Agent", "Sync", "Import and export", "Integration", "Maintenance"]


def test_help_groups_the_commands(kc):
    text = kc.ok(["help"]).stdout
    headings = [line[:-1] for line in text.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert [h for h in headings if h in GROUPS] == GROUPS, headings
    def group_of(name):
        current = None
        for line in text.splitlines():
            if line[:-1] in GROUPS:
                current = line[:-1]
            elif line.startswith(f"  {name} "):
                return current
    assert group_of("find") == "Lookup" and group_of("search") == "Lookup"
    assert group_of("add generic") == "Items" and group_of("delete") == "Items"
    assert group_of("unlock") == "Agent" and group_of("sync init") == "Sync" and group_of("conflicts") == "Sync"
    assert group_of("import pass") == "Import and export" and group_of("export") == "Import and export"
    assert group_of("git-credential") == "Integration" and group_of("ftp login") == "Integration"
    assert group_of("compact") == "Maintenance" and group_of("keychain list") == "Maintenance"


def test_man_page_has_examples(kc):
    page = kc.ok(["__man"]).stdout
    assert "\n.SH EXAMPLES\n" in page
    examples = page.split("\n.SH EXAMPLES\n", 1)[1].split("\n.SH ", 1)[0]
    for line in ["kc init", "kc generate 20", "kc sync init --remote"]:
        assert line.replace("-", "\\-") in examples, line
    headings = re.findall(r"^\.SH (.*)$", page, re.M)
    assert headings.index("EXAMPLES") > headings.index("COMMANDS")


def unescape_troff(text: str) -> str:
    return text.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")


def man_exit_rows(page: str) -> list:
    section = unescape_troff(page.split("\n.SH EXIT STATUS\n", 1)[1].split("\n.SH ", 1)[0])
    rows = re.findall(r"^\.B (\d+)\n\\fB(errSec\w+)\\fR \((-?\d+)\): (.*)$", section, re.M)
    return [(int(code), name, int(raw), meaning) for code, name, raw, meaning in rows]


def help_exit_rows(text: str) -> list:
    """Rows `  CODE NAME (OSSTATUS)`, each followed by its meaning on indented lines."""
    rows, current = [], None
    for line in text.splitlines():
        match = re.match(r"^  (\d+) +(errSec\w+) \((-?\d+)\)$", line)
        if match:
            current = [int(match[1]), match[2], int(match[3]), ""]
            rows.append(current)
        elif current and line.startswith("       "):
            current[3] = (current[3] + " " + line.strip()).strip()
        else:
            current = None
    return [tuple(row) for row in rows]


README_BEGIN, README_END = "<!-- exit-status:begin -->", "<!-- exit-status:end -->"


def readme_exit_rows(readme: str) -> list:
    """The README's table: between the markers, else under its '## Exit status' heading; rows
    `| errSecName | OSStatus | exit | meaning |`."""
    if README_BEGIN in readme:
        section = readme.split(README_BEGIN, 1)[1].split(README_END, 1)[0]
    else:
        section = readme.split("\n## Exit status\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (errSec\w+) \| (-?\d+) \| (\d+) \| (.*) \|$", section, re.M)
    return [(int(code), name, int(raw), meaning) for name, raw, code, meaning in rows]


def test_exit_status_tables_of_help_man_and_readme_agree(kc):
    man = man_exit_rows(kc.ok(["__man"]).stdout)
    helped = help_exit_rows(kc.ok(["help", "exit-status"]).stdout)
    assert len(man) == 14 and [row[1] for row in man][:2] == ["errSecSuccess", "errSecParam"]
    assert helped == man
    readme = readme_exit_rows((REPO / "README.md").read_text())
    assert readme, "README.md has no exit-status table (between the exit-status markers)"
    assert sorted(readme) == sorted(man)


def test_help_and_man_name_the_clipboard_status_kc_exits_with(kc_ready, tmp_path):
    """A missing clipboard program is errSecNotAvailable (53), in the help, the man page and in fact."""
    kc_ready.add_generic("clip.example", "me", "pw")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    result = kc_ready.run(["find", "-s", "clip.example", "-w", "--clip"],
                          env={"PATH": str(empty), "DISPLAY": ":99", "WAYLAND_DISPLAY": None})
    assert_failure(result, "errSecNotAvailable", EXIT_NOT_AVAILABLE)
    said = " ".join(kc_ready.ok(["help", "find"]).stdout.split())
    assert "without any of those programs: errSecNotAvailable (exit 53)" in said
    page = kc_ready.ok(["__man"]).stdout
    assert "programs: errSecInteractionNotAllowed" not in " ".join(page.split())
