#!/usr/bin/env python3
"""End to end through the example issuing service (scripts/token_service.py): a matchmaker's
POST /token with its bearer key gets a token; without it, 401; a bad request, 400; and the
token it got lets swarmfield-bot join a server running --auth tokens with the same key.
Every wait is bounded. Exit 0 on success, 1 with the reason otherwise."""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request


def fail(why):
    print("FAILED: " + why)
    sys.exit(1)


def wait_line(proc, pattern, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            if proc.poll() is not None:
                return None
            continue
        m = re.search(pattern, line)
        if m:
            return m
    return None


def post(url, body, bearer):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    if bearer:
        req.add_header("Authorization", "Bearer " + bearer)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def main():
    bin_dir, source_dir = sys.argv[1], sys.argv[2]
    tool = os.path.join(bin_dir, "swarmfield-tool")
    with tempfile.TemporaryDirectory(prefix="swarmfield-token-service-") as tmp:
        key = os.path.join(tmp, "match.key")
        api = os.path.join(tmp, "api.key")
        subprocess.run([tool, "token", "--new-key", key], check=True, capture_output=True, timeout=10)
        with open(api, "w", encoding="utf-8") as f:
            f.write("matchmaker-secret-0123456789\n")
        server = subprocess.Popen([os.path.join(bin_dir, "swarmfield-server"), "--auth", "tokens", "--key-file", key,
                                   "--port", "0", "--bind", "127.0.0.1", "--city-size", "64", "--agents", "20",
                                   "--duration", "30"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        service = subprocess.Popen([sys.executable, os.path.join(source_dir, "scripts", "token_service.py"),
                                    "--key-file", key, "--api-key-file", api, "--tool", tool, "--listen", "127.0.0.1:0"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            server.stdout = server.stderr  # wait_line reads what the server logs
            m = wait_line(server, r"listening tcp=(\d+)", 15)
            if not m:
                fail("the server did not start listening")
            game_port = int(m.group(1))
            # Keep reading the server's log so that it never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            m = wait_line(service, r"listening on 127\.0\.0\.1:(\d+)", 15)
            if not m:
                fail("the token service did not start")
            url = "http://127.0.0.1:%s/token" % m.group(1)
            request = {"server": "127.0.0.1:%d" % game_port, "name": "mm-alice", "client_id": 5, "expires": 60}
            code, text = post(url, request, None)
            if code != 401:
                fail("no bearer key: expected 401, got %d %s" % (code, text))
            code, text = post(url, request, "wrong-key-wrong-key")
            if code != 401:
                fail("wrong bearer key: expected 401, got %d" % code)
            code, text = post(url, {"name": "no server"}, "matchmaker-secret-0123456789")
            if code != 400:
                fail("no server: expected 400, got %d %s" % (code, text))
            code, token = post(url, request, "matchmaker-secret-0123456789")
            if code != 200 or not token.startswith("swft1:"):
                fail("expected a token, got %d %s" % (code, token))
            token_file = os.path.join(tmp, "alice.tok")
            with open(token_file, "w", encoding="utf-8") as f:
                f.write(token)
            bot = subprocess.run([os.path.join(bin_dir, "swarmfield-bot"), "--port", str(game_port), "--token-file",
                                  token_file, "--seconds", "2"], capture_output=True, text=True, timeout=30)
            summary = bot.stdout.strip().splitlines()[-1] if bot.stdout.strip() else ""
            if bot.returncode != 0 or "connected=1" not in summary:
                fail("the bot did not join with the service's token: %s %s" % (summary, bot.stderr[-300:]))
        finally:
            for p in (service, server):
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
    print("token service: 401 without or with a wrong bearer key, 400 without a server, a token the bot joined with")


if __name__ == "__main__":
    main()
