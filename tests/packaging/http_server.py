#!/usr/bin/python3
"""A loopback HTTP server for the packaging tests: serves DIR on 127.0.0.1 (a free port), prints
the port on stdout once it listens (the caller's `read` is the synchronisation), and appends
each request's path to LOG, so the test checks from outside which requests arrived.
Usage: http_server.py DIR LOG"""
import functools
import http.server
import sys

directory, log = sys.argv[1], sys.argv[2]


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        with open(log, "a", encoding="utf-8") as out:
            out.write(self.path + "\n")


server = http.server.ThreadingHTTPServer(
    ("127.0.0.1", 0), functools.partial(Handler, directory=directory))
print(server.server_address[1], flush=True)
server.serve_forever()
