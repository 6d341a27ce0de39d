"""kc generate, and add/update --generate: the password on stdout alone, its strength on stderr."""
import math
import re
import string

import pytest

from kcharness import EXIT_PARAM, assert_failure

STRENGTH = re.compile(r"^kc: strength: (\d+) bits$")
PRINTABLE = set(string.ascii_letters + string.digits + string.punctuation)


def generated(kc, *args) -> tuple[str, int]:
    """Runs kc generate: the password (stdout must be exactly one line) and the strength it reports."""
    result = kc.ok(["generate", *args])
    out = result.stdout_bytes
    assert out.endswith(b"\n") and out.count(b"\n") == 1, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and STRENGTH.match(lines[0]), result
    return out[:-1].decode("ascii"), int(STRENGTH.match(lines[0]).group(1))


def test_default_is_20_printable_characters(kc):
    password, bits = generated(kc)
    assert len(password) == 20 and set(password) <= PRINTABLE
    assert bits == math.floor(20 * math.log2(94))


def test_two_runs_differ(kc):
    assert generated(kc)[0] != generated(kc)[0]


@pytest.mark.parametrize("args, alphabet, length", [
    (["--length", "32", "--no-symbols"], string.ascii_letters + string.digits, 32),
    (["--charset", "a-f0-9", "--length", "40"], "abcdef0123456789", 40),
    (["--charset", "[:upper:][:digit:]_-", "--length", "24"], string.ascii_uppercase + string.digits + "_-", 24),
    (["--charset=-ab", "--length", "30"], "-ab", 30),
])
def test_charset_and_length(kc, args, alphabet, length):
    password, bits = generated(kc, *args)
    assert len(password) == length and set(password) <= set(alphabet)
    assert bits == math.floor(length * math.log2(len(set(alphabet))))


def test_words_are_from_the_eff_list(kc):
    password, bits = generated(kc, "--words", "7", "--separator", " ")
    words = password.split(" ")
    assert len(words) == 7 and all(re.fullmatch(r"[a-z]{3,9}|[a-z]+-[a-z]+", w) for w in words)
    assert bits == math.floor(7 * math.log2(7776))


def test_default_passphrase_uses_hyphens(kc):
    password, bits = generated(kc, "--words", "6")
    assert password.count("-") >= 5 and bits == 77


@pytest.mark.parametrize("args, words", [
    (["--length", "0"], "--length must be from 1 to 1024"),
    (["--length", "1025"], "--length must be from 1 to 1024"),
    (["--length", "x"], "--length must be a whole number"),
    (["--length", "6"], "39 bits"),  # 6 x log2(94) = 39.3 bits, under 40
    (["--charset", "0-9", "--length", "12"], "39 bits"),
    (["--words", "3"], "38 bits"),
    (["--words", "65"], "--words must be from 1 to 64"),
    (["--charset", "z-a"], "backwards"),
    (["--charset", "[:vowel:]"], "unknown class"),
    (["--charset", "[:lower"], "without its closing"),
    (["--charset", "a b"], "not a space"),
    (["--charset", "é"], "printable ASCII"),
    (["--charset", "aaaa"], "1 distinct character"),
    (["--charset", "!-/", "--no-symbols"], "0 distinct characters"),
    (["--words", "5", "--length", "20"], "exclude each other"),
    (["--words", "5", "--no-symbols"], "exclude each other"),
    (["--separator", "."], "--separator only applies to --words"),
    (["--words", "5", "--separator", "\t"], "--separator may hold"),
])
def test_bad_input_is_refused(kc, args, words):
    result = kc.run(["generate", *args])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert words in result.stderr and result.stdout_bytes == b""


def test_weak_request_names_the_smallest_that_reaches_40_bits(kc):
    result = kc.run(["generate", "--length", "6"])
    assert result.hint == "use --length 7 or more, or a larger --charset"
    assert kc.run(["generate", "--words", "3"]).hint == "use --words 4 or more"


def test_add_generate_stores_a_secret_and_prints_nothing(kc_ready):
    kc = kc_ready
    added = kc.ok(["add", "generic", "-s", "site", "-a", "me", "--generate"])
    assert added.stdout_bytes == b"" and added.stderr == "kc: added 1 item\n"   # the status line only, never the secret
    secret = kc.ok(["find", "generic", "-s", "site", "-w"]).stdout_bytes
    assert len(secret) == 21 and set(secret[:-1].decode()) <= PRINTABLE


def test_add_generate_print_prints_what_was_stored(kc_ready):
    kc = kc_ready
    added = kc.ok(["add", "internet", "-s", "ftp.example.com", "-a", "me", "--generate=length=24,no-symbols", "--print"])
    assert re.fullmatch(rb"[A-Za-z0-9]{24}\n", added.stdout_bytes), added
    assert kc.ok(["find", "-s", "ftp.example.com", "-w"]).stdout_bytes == added.stdout_bytes
    assert added.stdout.strip() not in added.stderr and all(added.stdout.strip() not in a for a in added.args)


def test_generate_spec_words_and_charset(kc_ready):
    kc = kc_ready
    words = kc.ok(["add", "generic", "-s", "w", "--generate=words=5,separator=,", "--print"]).stdout.strip()
    assert len(words.split(",")) == 5
    chars = kc.ok(["add", "generic", "-s", "c", "--generate=length=30,charset=a-c,", "--print"]).stdout.strip()
    assert len(chars) == 30 and set(chars) <= set("abc,")


def test_update_generate_changes_the_secret(kc_ready):
    kc = kc_ready
    kc.add_generic("site", "me", "old")
    updated = kc.ok(["update", "generic", "-s", "site", "--generate=words=6", "--print"])
    new = kc.ok(["find", "generic", "-s", "site", "-w"]).stdout_bytes
    assert new == updated.stdout_bytes and new != b"old\n" and new.count(b"-") >= 5
    quiet = kc.ok(["update", "generic", "-s", "site", "--generate"])
    assert quiet.stdout_bytes == b"" and kc.ok(["find", "generic", "-s", "site", "-w"]).stdout_bytes != new


def test_update_generate_never_shares_one_password_among_items(kc_ready):
    """update --all --generate would give every match the same generated password: refused."""
    kc = kc_ready
    kc.add_generic("site", "one", "old1")
    kc.add_generic("site", "two", "old2")
    before = kc.vault_path.read_bytes()
    result = kc.run(["update", "generic", "-s", "site", "--all", "--generate", "--print"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "same new password" in result.stderr and result.stdout_bytes == b""
    assert kc.vault_path.read_bytes() == before


@pytest.mark.parametrize("args, words", [
    (["--generate", "--password-stdin"], "exclude each other"),
    (["--generate", "-w"], "exclude each other"),
    (["--generate", "--binary"], "--binary only applies to --password-stdin"),
    (["--print", "--password-stdin"], "--print only applies to --generate"),
    (["--generate=length=4"], "bits of strength"),
    (["--generate=size=20"], "invalid --generate setting 'size=20'"),
    (["--generate=no-symbols=yes"], "invalid --generate setting"),
    (["--generate=length=20,length=30"], "more than once"),
    (["--generate=words=5,length=20"], "exclude each other"),
])
def test_add_generate_bad_input_leaves_the_vault_untouched(kc_ready, args, words):
    kc = kc_ready
    before = kc.vault_path.read_bytes()
    result = kc.run(["add", "generic", "-s", "site", *args], input="typed\n")
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert words in result.stderr and result.stdout_bytes == b""
    assert kc.vault_path.read_bytes() == before


def test_generate_takes_no_separate_value(kc_ready):
    """--generate's SPEC only follows '=': a word after it is an unexpected argument, not a SPEC."""
    result = kc_ready.run(["add", "generic", "-s", "site", "--generate", "length=30"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
