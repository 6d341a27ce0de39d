#!/usr/bin/env python3
"""Throw-away FTP server for kc's tests (pyftpdlib): virtual users only, loopback only.

  python3 ftpd_server.py --port 0 --user deploy:s3cret --root DIR [--tls-cert combined.pem]
      [--fail-delay 0] [--portfile F]

--tls-cert enables explicit FTPS (AUTH TLS on the same port; plain logins stay allowed).
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
ap.add_argument("--user", action="append", default=[], help="user:password (repeatable)")
ap.add_argument("--root", default=".")
ap.add_argument("--tls-cert", help="PEM with key and certificate: enables AUTH TLS")
ap.add_argument("--fail-delay", type=float, default=0.0, help="seconds before a 530 (pyftpdlib default 3)")
ap.add_argument("--portfile")
ap.add_argument("--log")
args = ap.parse_args()

authorizer = DummyAuthorizer()
os.makedirs(args.root, exist_ok=True)
for entry in args.user or ["deploy:s3cret"]:
    name, password = entry.split(":", 1)
    authorizer.add_user(name, password, args.root, perm="elr")

if args.tls_cert:
    from pyftpdlib.handlers import TLS_FTPHandler

    class Handler(TLS_FTPHandler):
        pass

    Handler.certfile = args.tls_cert
    Handler.tls_control_required = False
    Handler.tls_data_required = False
else:
    class Handler(FTPHandler):
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
