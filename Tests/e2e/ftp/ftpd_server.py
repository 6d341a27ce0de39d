#!/usr/bin/env python3
"""Throw-away FTP server for kc's tests (pyftpdlib): virtual users only, loopback only.

  python3 ftpd_server.py --port 0 --users-file USERS --root DIR [--tls-cert combined.pem]
      [--fail-delay 0] [--portfile F]

USERS holds one "name:password" per line, so that no password is in this process's argv
(the tests scan every process's argv and environment for it).

--tls-cert enables explicit FTPS (AUTH TLS on the same port; plain logins stay allowed);
with --implicit-tls the server speaks TLS from the first byte instead (implicit FTPS).
With --port 0 the kernel picks a free port; the chosen port is written to --portfile and
printed as "listening on HOST:PORT".
"""
import argparse
import logging
import os
import signal
import sys

from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--users-file", required=True, help="file of name:password lines")
ap.add_argument("--root", default=".")
ap.add_argument("--tls-cert", help="PEM with key and certificate: enables AUTH TLS")
ap.add_argument("--implicit-tls", action="store_true", help="with --tls-cert: TLS from the first byte (implicit FTPS)")
ap.add_argument("--fail-delay", type=float, default=0.0, help="seconds before a 530 (pyftpdlib default 3)")
ap.add_argument("--portfile")
ap.add_argument("--log")
args = ap.parse_args()

authorizer = DummyAuthorizer()
os.makedirs(args.root, exist_ok=True)
with open(args.users_file) as f:
    entries = [line.rstrip("\n") for line in f if ":" in line]
for entry in entries:
    name, password = entry.split(":", 1)
    authorizer.add_user(name, password, args.root, perm="elr")

class LogsEveryCommand:
    """Logs every command the client sends, as "COMMAND NAME" (the argument of USER too, never of
    PASS), before pyftpdlib handles it: a USER or PASS shows even if the client hangs up at once."""

    def pre_process_command(self, line, cmd, arg):
        logging.info("COMMAND %s%s", cmd, f" {arg}" if cmd == "USER" else "")
        super().pre_process_command(line, cmd, arg)


if args.tls_cert:
    from pyftpdlib.handlers import TLS_FTPHandler

    class Handler(LogsEveryCommand, TLS_FTPHandler):
        def handle(self):
            if args.implicit_tls:   # start TLS before the greeting
                self.secure_connection(self.ssl_context)
            super().handle()

    Handler.certfile = args.tls_cert
    Handler.tls_control_required = False
    Handler.tls_data_required = False
else:
    class Handler(LogsEveryCommand, FTPHandler):
        pass

Handler.authorizer = authorizer
Handler.banner = "kc test ftpd ready"
Handler.auth_failed_timeout = args.fail_delay
Handler.permit_foreign_addresses = False

logging.basicConfig(filename=args.log, level=logging.INFO, format="%(asctime)s %(message)s")
server = FTPServer((args.host, args.port), Handler)
server.max_cons = 64
port = server.address[1]
if args.portfile:
    with open(args.portfile + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(args.portfile + ".tmp", args.portfile)
signal.signal(signal.SIGTERM, lambda *_: (server.close_all(), sys.exit(0)))
print(f"listening on {args.host}:{port} tls={bool(args.tls_cert)}", flush=True)
server.serve_forever()
