#!/usr/bin/env python3
"""Serves the built page (dist/) while the server is still compiling.

scripts/run.sh starts this once the app is built and the server is not, so a first start
shows the playground as soon as it can: the AtomWorld playground computes its verdicts in the
browser and needs no server. Every /api/ request is answered 503 with the API's error shape
and code `starting`, which the page shows in its status line; it keeps asking and picks up
the server once run.sh has swapped it in on the same address.

Written here rather than taken from a crate: it must run before any Rust has been compiled,
and Python 3 is already a prerequisite of the quick start.

    scripts/serve-page.py --dist dist --addr 127.0.0.1:8080
"""

import argparse
import http.server
import json
import os
import sys

STARTING = {
    "error": {
        "code": "starting",
        "message": "the server is still being built; the playground works without it, "
        "and models, suites, rooms and runs come as soon as it is up",
    }
}


def handler_for(dist):
    class PageHandler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=dist, **kwargs)

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path.startswith("/api/"):
                return self.starting()
            # The page's own routes (/suites, /c/<id>, /rooms/…) are index.html, as the
            # server serves them.
            local = os.path.join(dist, path.lstrip("/"))
            if path != "/" and not os.path.isfile(local):
                self.path = "/index.html"
            return super().do_GET()

        def do_POST(self):
            return self.starting()

        def starting(self):
            body = json.dumps(STARTING).encode()
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Retry-After", "5")
            self.end_headers()
            self.wfile.write(body)

        def end_headers(self):
            # The server replaces this page's files with the same ones; nothing may be cached
            # as if it were final.
            self.send_header("Cache-Control", "no-store")
            super().end_headers()

        def log_message(self, fmt, *args):
            pass

    return PageHandler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", default="dist")
    parser.add_argument("--addr", default="127.0.0.1:8080")
    args = parser.parse_args()
    host, sep, port = args.addr.rpartition(":")
    if not sep or not port.isdigit():
        sys.exit(f"serve-page: --addr must be host:port, not {args.addr!r}")
    if not os.path.isfile(os.path.join(args.dist, "index.html")):
        sys.exit(f"serve-page: {args.dist}/index.html is missing; build the app first")
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    server = http.server.ThreadingHTTPServer(
        (host.strip("[]"), int(port)), handler_for(os.path.abspath(args.dist))
    )
    server.serve_forever()


if __name__ == "__main__":
    main()
