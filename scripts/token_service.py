#!/usr/bin/env python3
"""A tiny connect-token issuing service: the HTTP endpoint a matchmaker calls once it has placed
a player on a server (README: Connect tokens). It holds the key the game servers share
(--key-file, made by `swarmfield-tool token --new-key FILE`) and issues each token with
`swarmfield-tool token`; callers prove themselves with a bearer key of their own
(--api-key-file), so only the matchmaker gets tokens.

    scripts/token_service.py --key-file match.key --api-key-file api.key \
        --tool build/bin/swarmfield-tool [--listen 127.0.0.1:8088]

    POST /token   Authorization: Bearer <contents of api.key>
                  {"server": "203.0.113.7:7777", "name": "alice", "role": "player",
                   "client_id": 17, "expires": 300}
    -> 200 text/plain: the token line (swft1:...), for the player's --token-file
       401 without the right bearer key, 400 on a bad request (the reason as text)

An example, not a product: it listens on 127.0.0.1 by default (put TLS in front of it before
anything else reaches it), keeps no state and no logs beyond one line per request.
"""
import argparse
import hmac
import json
import re
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 4096
ADDRESS = re.compile(r"^[A-Za-z0-9.\-\[\]:]{1,64}:[0-9]{1,5}$")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--key-file", required=True, help="the key the game servers share (--auth tokens --key-file)")
    ap.add_argument("--api-key-file", required=True, help="a file holding the bearer key callers must send")
    ap.add_argument("--tool", default="swarmfield-tool", help="path of swarmfield-tool")
    ap.add_argument("--listen", default="127.0.0.1:8088", help="HOST:PORT to listen on (port 0: any free port)")
    args = ap.parse_args()
    with open(args.api_key_file, encoding="utf-8") as f:
        api_key = f.read().strip()
    if len(api_key) < 16:
        sys.exit("error: the API key in %s must be at least 16 characters" % args.api_key_file)
    host, port = args.listen.rsplit(":", 1)

    class Handler(BaseHTTPRequestHandler):
        def reply(self, code, text):
            body = (text + "\n").encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            if self.path != "/token":
                return self.reply(404, "POST /token")
            given = self.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), ("Bearer " + api_key).encode()):
                return self.reply(401, "missing or wrong bearer key")
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = -1
            if length < 0 or length > MAX_BODY:
                return self.reply(400, "the body must be JSON of at most %d bytes" % MAX_BODY)
            try:
                req = json.loads(self.rfile.read(length) or b"{}")
                server = str(req["server"])
                name = str(req.get("name", "player"))
                role = str(req.get("role", "player"))
                client_id = int(req.get("client_id", 0))
                expires = int(req.get("expires", 300))
            except (ValueError, KeyError, TypeError) as e:
                return self.reply(400, "bad request: %s (needs at least {\"server\": \"host:port\"})" % e)
            if not ADDRESS.match(server) or role not in ("player", "viewer") or client_id < 0 or not 1 <= expires <= 86400:
                return self.reply(400, "bad request: server host:port, role player|viewer, client_id >= 0, expires 1..86400")
            # "--flag=value": a value starting with '-' stays a value.
            cmd = [args.tool, "token", "--key-file=" + args.key_file, "--server=" + server, "--name=" + name,
                   "--role=" + role, "--client-id=%d" % client_id, "--expires=%d" % expires]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
            if done.returncode != 0:
                return self.reply(400, done.stderr.strip() or "swarmfield-tool token failed")
            self.reply(200, done.stdout.strip())

        def log_message(self, fmt, *a):
            sys.stderr.write("token_service: %s %s\n" % (self.address_string(), fmt % a))

    httpd = ThreadingHTTPServer((host, int(port)), Handler)
    print("token_service listening on %s:%d" % httpd.server_address[:2], flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
