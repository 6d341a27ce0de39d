"""Attribute values shown on a terminal: C1 controls and bidi/format controls are escaped like C0
ones, so a stored name cannot send a one-byte CSI (U+009B) or reorder what `list` shows (U+202E)."""
import json

RAW = "evil\u009b31m\u202egpj.exe\u2066x\u200f"
SHOWN = "evil\\u{009b}31m\\u{202e}gpj.exe\\u{2066}x\\u{200f}"


def test_list_and_find_escape_c1_and_bidi_controls(kc_ready):
    kc = kc_ready
    kc.add_generic(RAW, "me")
    for args in (["list"], ["find", "generic", "-a", "me"]):
        shown = kc.ok(args).stdout
        assert SHOWN in shown, shown
        for raw in ("\u009b", "\u202e", "\u2066", "\u200f"):
            assert raw not in shown, (args, raw)
    # JSON is for programs: the value comes back exactly as stored.
    items = json.loads(kc.ok(["list", "--json"]).stdout)
    assert [item["service"] for item in items] == [RAW]
