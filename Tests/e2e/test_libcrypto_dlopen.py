"""libcrypto (OpenSSL) is loaded with dlopen by the commands that need it only (Sources/CLibCrypto):
the kc binary must not link it, since loading it costs every command about a millisecond."""
import subprocess


def test_binary_does_not_link_libcrypto(kc_bin):
    ldd = subprocess.run(["ldd", kc_bin], capture_output=True, text=True, timeout=30)
    assert ldd.returncode == 0, ldd.stderr
    assert "libc.so.6" in ldd.stdout, ldd.stdout  # the listing is real
    linked = [line.strip() for line in ldd.stdout.splitlines() if "libcrypto" in line or "libssl" in line]
    assert linked == [], f"{kc_bin} links OpenSSL (directly or through a library): {linked}"


def test_everyday_commands_do_not_load_libcrypto(kc_ready):
    kc = kc_ready
    kc.add_generic("svc", "me")
    for args in (["--version"], ["list"], ["find", "-s", "svc", "-w"]):
        result = kc.run(args, env={**kc.env, "LD_DEBUG": "files"})
        assert result.returncode == 0, result.stderr[-2000:]
        lines = [line for line in result.stderr.splitlines() if "file=" in line]
        assert any("libc.so.6" in line for line in lines), lines  # LD_DEBUG took effect
        assert not [line for line in lines if "libcrypto" in line], f"kc {' '.join(args)} loaded libcrypto"
