#!/usr/bin/env python3
# A fake Ollama /api/embed for measuring lode's request pattern: fixed-size
# vectors from a word hash, counts requests and texts.
import json, sys, threading, zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
DIM = 256
stats = {"requests": 0, "texts": 0}
lock = threading.Lock()
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        body = json.dumps(stats).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        req = json.loads(self.rfile.read(n))
        inputs = req["input"] if isinstance(req["input"], list) else [req["input"]]
        out = []
        for t in inputs:
            v = [0.0] * DIM
            for w in t.split():
                v[zlib.crc32(w.encode()) % DIM] += 1.0
            v[0] += 0.01
            out.append(v)
        with lock:
            stats["requests"] += 1; stats["texts"] += len(inputs)
        body = json.dumps({"embeddings": out}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
