#!/usr/bin/python3
"""Stores the items of a tab-separated file (server, account, password per line) in gnome-keyring
through the Secret Service D-Bus API, in one process, for `secret-tool lookup` to find.

The items go into the session collection, which gnome-keyring keeps in memory as it keeps an unlocked
login keyring: a lookup costs the same, but each item stored in the login keyring rewrites the whole
keyring file (1,000 items took 36 s, 10,000 would take about an hour). Run by bench.py with the system
Python (python3-dbus) on the benchmark's private session bus."""
import sys

import dbus

SECRETS = "org.freedesktop.secrets"
SERVICE = "org.freedesktop.Secret.Service"
ITEM = "org.freedesktop.Secret.Item"


def main(path: str) -> None:
    bus = dbus.SessionBus()
    service = dbus.Interface(bus.get_object(SECRETS, "/org/freedesktop/secrets"), SERVICE)
    _, session = service.OpenSession("plain", dbus.String("", variant_level=1))
    collection = dbus.Interface(bus.get_object(SECRETS, "/org/freedesktop/secrets/collection/session"),
                                "org.freedesktop.Secret.Collection")
    with open(path) as items:
        for line in items:
            server, account, password = line.rstrip("\n").split("\t")
            properties = {
                ITEM + ".Label": dbus.String(f"{account}@{server}", variant_level=1),
                ITEM + ".Attributes": dbus.Dictionary({"server": server, "user": account, "protocol": "https"},
                                                      signature="ss", variant_level=1),
            }
            secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(password.encode()), "text/plain"))
            collection.CreateItem(properties, secret, False)


if __name__ == "__main__":
    main(sys.argv[1])
