#!/usr/bin/env python3
"""distenv benchmarks: figures, not pass/fail tests.

1. HTTPS keep-alive throughput and latency (wrk, Lua-scripted POSTs) for three
   AdmissionReviews (a 4 KB StatefulSet pod, a 64 KB pod with many containers and
   env entries, a W=1024 Indexed Job pod whose TF_CONFIG lists 1024 hosts) at 1,
   16 and 64 connections, against distenv-webhook and against nginx answering
   the same POST with a static body of the same size, same certificate, same TLS
   version. Server CPU time per request is read from /proc (less sensitive to a
   busy machine than requests/s).
2. Latency at a fixed 2,000 requests/s (bench/loadgen, open loop, latency from
   the moment each request was due).
3. distenv's peak RSS (VmHWM) after all of that.
4. Instructions per admission of the core as W grows (callgrind on
   bench/core_cost), and the growth per rank.
5. New connections: every request on a new connection (a full TLS handshake
   each, as kube-apiserver dials in a burst), for each body, against distenv,
   nginx and the controller-runtime peer (bench/cluster/peer --standalone),
   interleaved: server CPU per request, and distenv's socket reads and waits
   per handshake (its /metrics).
6. Kept-alive requests with 1,024 idle kept-alive connections open beside
   them, against the same three: what a server's loop costs per request when
   many connections sit idle.

Writes OUT/results.md and OUT/results.json and prints the tables.
"""
import argparse
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [("sts-4k", "4 KB StatefulSet pod"), ("pod-64k", "64 KB pod, 12 containers x 57 env"),
         ("job-w1024", "Indexed Job, W=1024, TF_CONFIG")]
CONNS = [1, 16, 64]
WORLDS = [1, 8, 64, 512, 1024, 4096, 8192]
RATE = 2000
TICK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, proc, timeout=15.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit("bench: server exited with %d" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("bench: nothing listens on %d after %.0fs" % (port, timeout))


def cpu_ticks(pids):
    t = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            t += int(fields[11]) + int(fields[12])  # utime, stime
        except OSError:
            pass
    return t


def thread_ticks(pid, name="MHD-worker"):
    """CPU ticks of each thread of pid called name (the network threads), by thread id."""
    ticks = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return ticks
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() != name:
                    continue
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks[int(tid)] = int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return ticks


def children(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def status_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def tls_info(port):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="distenv.distenv-system.svc") as s:
            return "%s %s" % (s.version(), s.cipher()[0])


def post(port, path, body):
    """One POST over TLS; returns (status, response body)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    import http.client
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
    c.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


class Distenv:
    def __init__(self, binary, work, certs):
        self.port = free_port()
        cfg = os.path.join(work, "distenv.yaml")
        with open(cfg, "w") as f:
            # The documented defaults, but look-ups off (no API server here).
            # Room for the 1,024 idle connections of the idle rows, all from 127.0.0.1.
            f.write("lookups:\n  enabled: false\nserver:\n  maxConnections: 2048\n"
                    "  maxConnectionsPerIP: 2048\n")
        self.log_path = os.path.join(work, "distenv.log")
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", cfg, "--no-lookups",
             "--listen", "127.0.0.1:%d" % self.port,
             "--tls-cert", os.path.join(certs, "tls.crt"),
             "--tls-key", os.path.join(certs, "tls.key")],
            stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"))
        wait_port(self.port, self.proc)

    def pids(self):
        return [self.proc.pid]

    def path(self, case):
        return "/mutate"

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -9


class Nginx:
    def __init__(self, work, certs, bodies):
        self.port = free_port()
        self.dir = os.path.join(work, "nginx")
        html = os.path.join(self.dir, "html")
        os.makedirs(html, exist_ok=True)
        for name, data in bodies.items():
            with open(os.path.join(html, name), "wb") as f:
                f.write(data)
        for d in [self.dir, html]:
            os.chmod(d, 0o755)
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""worker_processes auto;
daemon off;
pid %(d)s/nginx.pid;
error_log %(d)s/error.log warn;
events { worker_connections 4096; }
http {
  # One log line per request, as distenv writes one per admission.
  access_log %(d)s/access.log;
  client_body_temp_path %(d)s/body;
  proxy_temp_path %(d)s/proxy;
  fastcgi_temp_path %(d)s/fastcgi;
  uwsgi_temp_path %(d)s/uwsgi;
  scgi_temp_path %(d)s/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 120s;
  client_body_buffer_size 1m;
  client_max_body_size 8m;
  server {
    listen 127.0.0.1:%(p)d ssl;
    ssl_certificate %(c)s/tls.crt;
    ssl_certificate_key %(c)s/tls.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    root %(d)s/html;
    default_type application/json;
    # The static module answers POST with 405: turn that into the file, 200.
    location / { error_page 405 =200 $uri; }
  }
}
""" % {"d": self.dir, "p": self.port, "c": certs})
        self.proc = subprocess.Popen(["nginx", "-p", self.dir, "-c", conf],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, self.proc)

    def pids(self):
        return [self.proc.pid] + children(self.proc.pid)

    def path(self, case):
        return "/" + case

    def stop(self):
        self.proc.send_signal(signal.SIGQUIT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Peer(Distenv):
    """The controller-runtime peer without an API server (--standalone): it decodes
    each pod and denies it (its owners are not found), a floor of what it costs.
    Served, measured and stopped as distenv is (one process, /mutate, SIGTERM)."""

    def __init__(self, binary, work, certs):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, "--standalone", "--listen", "127.0.0.1:%d" % self.port, "--cert-dir", certs],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "peer.log"), "w"))
        wait_port(self.port, self.proc)


def distenv_handshakes(port):
    """distenv's handshake counters from its /metrics: (handshakes, reads, waits)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    vals = []
    for name in ("distenv_tls_handshakes_total", "distenv_tls_handshake_reads_total",
                 "distenv_tls_handshake_waits_total"):
        m = re.search(r"^%s (\S+)$" % name, text, re.M)
        vals.append(float(m.group(1)) if m else 0.0)
    return vals


def run_loadgen_cpu(loadgen, server, case, body_path, seconds, extra):
    """loadgen at 16 connections for seconds; the server's CPU per request."""
    pids = server.pids()
    t0 = cpu_ticks(pids)
    out = subprocess.run(
        [loadgen, "-p", str(server.port), "-P", server.path(case), "-b", body_path,
         "-c", "16", "-t", "2", "-d", str(seconds), "--no-uid-check"] + extra,
        capture_output=True, text=True, timeout=seconds + 120)
    t1 = cpu_ticks(pids)
    m = re.search(r"^JSON (.*)$", out.stdout, re.M)
    if m is None:
        raise SystemExit("bench: loadgen failed: %s %s" % (out.stdout[-500:], out.stderr[-500:]))
    r = json.loads(m.group(1))
    r["cpu_us_per_req"] = (t1 - t0) / TICK * 1e6 / max(1, r["ok"])
    return r


def hold_idle(port, n):
    """Opens n TLS connections, handshakes done, that then sit idle (kept alive)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    held = []
    for _ in range(n):
        held.append(ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                    server_hostname="distenv.distenv-system.svc"))
    return held


def connection_part(a, work, results, d, n, p, loadgen, seconds):
    """New connections (a handshake per request) and kept-alive requests beside 1,024
    idle connections: distenv, nginx and the peer, interleaved."""
    rounds = int(os.environ.get("BENCH_ROUNDS", "1" if a.quick else "3"))
    trio = [("nginx", n), ("peer", p), ("distenv", d)]
    for rnd in range(rounds):
        for case, _ in CASES:
            body = os.path.join(work, "bodies", case + ".json")
            row = {"case": case, "round": rnd + 1}
            for name, srv in trio[rnd % 3:] + trio[:rnd % 3]:
                h0 = distenv_handshakes(srv.port) if srv is d else None
                r = run_loadgen_cpu(loadgen, srv, case, body, seconds, ["-r", "1"])
                if h0 is not None:
                    h1 = distenv_handshakes(srv.port)
                    hs = max(1.0, h1[0] - h0[0])
                    r["reads_per_handshake"] = (h1[1] - h0[1]) / hs
                    r["waits_per_handshake"] = (h1[2] - h0[2]) / hs
                row[name] = r
                log("new connections round %d %-9s %-7s %6.0f req/s cpu %6.0f us/req failed %d%s" % (
                    rnd + 1, case, name, r["rps"], r["cpu_us_per_req"], r["failed"],
                    " reads/handshake %.1f waits/handshake %.2f" % (
                        r["reads_per_handshake"], r["waits_per_handshake"]) if h0 else ""))
            results["newconn"].append(row)
    idle_n = 256 if a.quick else 1024
    body = os.path.join(work, "bodies", "sts-4k.json")
    for rnd in range(rounds):
        for name, srv in trio[rnd % 3:] + trio[:rnd % 3]:
            row = {"server": name, "round": rnd + 1, "idle": idle_n}
            row["alone"] = run_loadgen_cpu(loadgen, srv, "sts-4k", body, seconds, [])
            held = hold_idle(srv.port, idle_n)
            try:
                time.sleep(0.5)
                row["beside_idle"] = run_loadgen_cpu(loadgen, srv, "sts-4k", body, seconds, [])
            finally:
                for h in held:
                    h.close()
            time.sleep(0.5)
            log("kept alive round %d %-7s alone %5.1f us/req, beside %d idle %5.1f us/req" % (
                rnd + 1, name, row["alone"]["cpu_us_per_req"], idle_n,
                row["beside_idle"]["cpu_us_per_req"]))
            results["idle"].append(row)


def run_wrk(server, case, body_path, conns, seconds):
    threads = 1 if conns == 1 else 2
    env = dict(os.environ, BODY=body_path)
    pids = server.pids()
    t0 = cpu_ticks(pids)
    th0 = thread_ticks(pids[0]) if isinstance(server, Distenv) else {}
    out = subprocess.run(
        ["wrk", "-t%d" % threads, "-c%d" % conns, "-d%ds" % seconds, "--latency",
         "-s", os.path.join(HERE, "post.lua"),
         "https://127.0.0.1:%d%s" % (server.port, server.path(case))],
        env=env, capture_output=True, text=True, timeout=seconds + 60)
    t1 = cpu_ticks(pids)
    th1 = thread_ticks(pids[0]) if isinstance(server, Distenv) else {}
    m = re.search(r"^WRKJSON (.*)$", out.stdout, re.M)
    if out.returncode != 0 or m is None:
        raise SystemExit("bench: wrk failed: %s %s" % (out.stdout[-500:], out.stderr[-500:]))
    r = json.loads(m.group(1))
    r["rps"] = r["requests"] / (r["duration_us"] / 1e6)
    r["cpu_us_per_req"] = (t1 - t0) / TICK * 1e6 / max(1, r["requests"])
    if th1:
        # Per network thread, in thread-id order: are connections spread over all of them?
        r["thread_ticks"] = [th1[t] - th0.get(t, 0) for t in sorted(th1)]
    return r


def run_rate(loadgen, server, case, body_path, seconds, rate=RATE):
    out = subprocess.run(
        [loadgen, "-p", str(server.port), "-P", server.path(case), "-b", body_path,
         "-c", "8", "-R", str(rate), "-d", str(seconds), "--no-uid-check"],
        capture_output=True, text=True, timeout=seconds + 60)
    m = re.search(r"^JSON (.*)$", out.stdout, re.M)
    if m is None:
        raise SystemExit("bench: loadgen failed: %s %s" % (out.stdout, out.stderr))
    return json.loads(m.group(1))


def callgrind_instr(core_cost, arg, work):
    outf = os.path.join(work, "callgrind.out.%s" % re.sub(r"[^A-Za-z0-9]", "_", arg))
    r = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no",
                        "--callgrind-out-file=" + outf, core_cost, "--callgrind", arg],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit("bench: core_cost under callgrind failed: %s" % r.stderr[-1000:])
    with open(outf) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1]), r.stdout.strip()
    raise SystemExit("bench: no instruction total in " + outf)


def http_part(a, work, results, servers, loadgen, seconds, rate_seconds):
    """The HTTPS part: distenv and nginx under wrk, fixed rate, peak RSS."""
    certs = os.path.join(work, "certs")
    subprocess.run([a.binary, "certs", "--service", "distenv", "--namespace",
                    "distenv-system", "--out", certs], check=True,
                   stdout=subprocess.DEVNULL)

    d = Distenv(a.binary, work, certs)
    servers.append(d)
    # nginx answers with distenv's own answers, byte for byte.
    answers = {}
    for case, _ in CASES:
        path = os.path.join(work, "bodies", case + ".json")
        with open(path, "rb") as f:
            req = f.read()
        st, resp = post(d.port, "/mutate", req)
        if st != 200 or b'"patchType":"JSONPatch"' not in resp:
            raise SystemExit("bench: distenv did not patch %s: %d %r" % (case, st, resp[:300]))
        answers[case] = resp
        results["bodies"][case] = {"request_bytes": len(req), "response_bytes": len(resp)}
    n = Nginx(work, certs, answers)
    servers.append(n)
    results["machine"]["tls_distenv"] = tls_info(d.port)
    results["machine"]["tls_nginx"] = tls_info(n.port)
    log("TLS: distenv %s, nginx %s" % (results["machine"]["tls_distenv"],
                                        results["machine"]["tls_nginx"]))

    # Whole rounds over every case, so that a disturbance of the machine hits one
    # round of a row, not every round of it; the summary gives each row's worst.
    rounds = 0 if a.connections_only else int(os.environ.get("BENCH_ROUNDS",
                                                                "1" if a.quick else "3"))
    for rnd in range(rounds):
        for case, desc in CASES:
            body = os.path.join(work, "bodies", case + ".json")
            for c in CONNS:
                row = {"case": case, "conns": c, "round": rnd + 1}
                for name, srv in (("nginx", n), ("distenv", d)):
                    r = run_wrk(srv, case, body, c, seconds)
                    row[name] = r
                    log("round %d %-9s c=%-2d %-7s %8.0f req/s p50 %6s us p99 %6s us cpu %5.1f "
                        "us/req non2xx %d errors %d" % (
                            rnd + 1, case, c, name, r["rps"], r["p50_us"], r["p99_us"],
                            r["cpu_us_per_req"], r["non2xx"], r["io_errors"]) +
                        (" threads %s" % r["thread_ticks"] if "thread_ticks" in r else ""))
                row["ratio"] = row["distenv"]["rps"] / row["nginx"]["rps"]
                row["cpu_ratio"] = (row["distenv"]["cpu_us_per_req"] /
                                    max(1e-9, row["nginx"]["cpu_us_per_req"]))
                results["http"].append(row)
            if rnd == 0:
                results.setdefault("rss_after", {})[case] = status_kb(d.proc.pid, "VmHWM")

    # Tail latency is what other processes on the machine disturb most: several
    # alternating rounds, each reported, so a disturbed round shows as one.
    body = os.path.join(work, "bodies", "sts-4k.json")
    for rnd in range(0 if a.connections_only else 1 if a.quick else 3):
        for name, srv in (("nginx", n), ("distenv", d)):
            r = run_rate(loadgen, srv, "sts-4k", body, rate_seconds)
            r["server"] = name
            r["round"] = rnd + 1
            r["loadavg"] = os.getloadavg()[0]
            results["rate"].append(r)
            log("rate %d/s round %d %-7s p50 %s us p99 %s us p99.9 %s us max %s us failed %d" % (
                RATE, rnd + 1, name, r["p50_us"], r["p99_us"], r["p999_us"], r["max_us"],
                r["failed"]))

    if a.peer and os.environ.get("BENCH_CONNECTIONS", "1") != "0":
        p = Peer(a.peer, work, certs)
        servers.append(p)
        connection_part(a, work, results, d, n, p, loadgen, seconds)
    elif os.environ.get("BENCH_CONNECTIONS", "1") != "0":
        log("no peer binary (--peer): the new-connection rows are left out")

    results["rss"] = {"VmHWM_kb": status_kb(d.proc.pid, "VmHWM"),
                      "VmRSS_kb": status_kb(d.proc.pid, "VmRSS")}
    log("distenv peak RSS (VmHWM) %d KiB" % results["rss"]["VmHWM_kb"])
    results["distenv_exit"] = d.stop()
    servers.remove(d)


def fmt_us(v):
    return "%.0f" % v if v < 10000 else "%.1f ms" % (v / 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--core-only", action="store_true", help="only the callgrind/core tables")
    ap.add_argument("--peer", help="bench/cluster/peer, for the new-connection rows")
    ap.add_argument("--connections-only", action="store_true",
                    help="only the new-connection and idle-connection rows")
    a = ap.parse_args()
    seconds = int(os.environ.get("BENCH_SECONDS", "2" if a.quick else "5"))
    rate_seconds = 4 if a.quick else 10
    out = os.path.abspath(a.out)
    bindir = os.path.join(out, "bin")
    loadgen = os.path.join(bindir, "loadgen")
    core_cost = os.path.join(bindir, "core_cost")
    work = tempfile.mkdtemp(prefix="distenv-bench-")
    os.chmod(work, 0o755)  # nginx workers (nobody) read the static answers below it
    results = {"machine": {}, "http": [], "rate": [], "core": [], "bodies": {}, "newconn": [],
               "idle": []}
    md = []
    servers = []
    try:
        load0 = os.getloadavg()
        results["machine"] = {
            "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                         if l.startswith("model name")), platform.machine()),
            "cores": os.cpu_count(),
            "kernel": platform.release(),
            "loadavg_start": load0,
            "nginx": subprocess.run(["nginx", "-v"], capture_output=True,
                                    text=True).stderr.strip(),
            "quick": a.quick,
            "seconds_per_run": seconds,
        }
        subprocess.run([sys.executable, os.path.join(HERE, "gen_reviews.py"),
                        os.path.join(work, "bodies")], check=True, stdout=subprocess.DEVNULL)
        if not a.core_only:
            http_part(a, work, results, servers, loadgen, seconds, rate_seconds)
        prev = None
        for w in ([] if a.connections_only else WORLDS):
            instr, _ = callgrind_instr(core_cost, str(w), work)
            row = {"W": w, "instructions": instr}
            if prev is not None:
                row["per_rank_since_prev"] = (instr - prev[1]) / (w - prev[0])
            results["core"].append(row)
            prev = (w, instr)
            log("core W=%-5d %12d instructions" % (w, instr))
        results["core_files"] = {}
        for case, _ in ([] if a.connections_only else CASES):
            instr, _ = callgrind_instr(core_cost, "@" + os.path.join(work, "bodies", case + ".json"),
                                       work)
            results["core_files"][case] = instr
        wall = "" if a.connections_only else subprocess.run(
                              [core_cost] + [str(w) for w in WORLDS] +
                              ["@" + os.path.join(work, "bodies", c + ".json") for c, _ in CASES],
                              capture_output=True, text=True, check=True).stdout
        results["core_wall"] = wall
        results["machine"]["loadavg_end"] = os.getloadavg()
    finally:
        for s in servers:
            s.stop()

    # ---- report ---------------------------------------------------------------
    m = results["machine"]
    md.append("Machine: %s, %d cores, kernel %s; %s; load average at start %.2f, at end %.2f%s."
              % (m["cpu"], m["cores"], m["kernel"], m["nginx"], m["loadavg_start"][0],
                 m.get("loadavg_end", (0,))[0], " (BENCH_QUICK)" if a.quick else ""))
    if not a.core_only:
        md.append("TLS: distenv %s; nginx %s; same ECDSA P-256 certificate.\n"
                  % (m["tls_distenv"], m["tls_nginx"]))
        md.append("| round | case | req B | resp B | conns | nginx req/s | distenv req/s | ratio | "
                  "nginx p50/p99 us | distenv p50/p99 us | nginx CPU us/req | distenv CPU us/req | "
                  "distenv CPU ticks per network thread |")
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in results["http"]:
            b = results["bodies"][r["case"]]
            md.append("| %d | %s | %d | %d | %d | %.0f | %.0f | %.2f | %s / %s | %s / %s | %.1f | %.1f | %s |" % (
                r["round"], r["case"], b["request_bytes"], b["response_bytes"], r["conns"],
                r["nginx"]["rps"],
                r["distenv"]["rps"], r["ratio"], fmt_us(r["nginx"]["p50_us"]),
                fmt_us(r["nginx"]["p99_us"]), fmt_us(r["distenv"]["p50_us"]),
                fmt_us(r["distenv"]["p99_us"]), r["nginx"]["cpu_us_per_req"],
                r["distenv"]["cpu_us_per_req"],
                " ".join(str(t) for t in r["distenv"].get("thread_ticks", []))))
        md.append("\nEach row over its rounds: requests/s ratio (distenv / nginx of the same "
                  "round) and CPU per request ratio, worst and best.\n")
        md.append("| case | conns | rounds | req/s ratio, worst | best | CPU ratio, worst | best |")
        md.append("|---|---|---|---|---|---|---|")
        for case, _ in CASES:
            for c in CONNS:
                rs = [r for r in results["http"] if r["case"] == case and r["conns"] == c]
                if rs:
                    md.append("| %s | %d | %d | %.2f | %.2f | %.2f | %.2f |" % (
                        case, c, len(rs), min(r["ratio"] for r in rs),
                        max(r["ratio"] for r in rs), max(r["cpu_ratio"] for r in rs),
                        min(r["cpu_ratio"] for r in rs)))
        bad = [r for r in results["http"] if r["distenv"]["non2xx"] or r["distenv"]["io_errors"]]
        md.append("\nNon-200 answers or socket errors from distenv: %s." %
                  ("none" if not bad else ", ".join("%s c=%d round %d" % (r["case"], r["conns"], r["round"])
                                              for r in bad)))
        md.append("\nFixed rate, %d req/s, 8 keep-alive connections, 4 KB pod, open loop "
                  "(bench/loadgen), %d s:\n" % (RATE, rate_seconds))
        md.append("| round | server | achieved req/s | p50 us | p90 us | p99 us | p99.9 us | max us "
                  "| failed | load avg |")
        md.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in results["rate"]:
            md.append("| %d | %s | %.0f | %d | %d | %d | %d | %d | %d | %.2f |" % (
                r["round"], r["server"], r["rps"], r["p50_us"], r["p90_us"], r["p99_us"],
                r["p999_us"], r["max_us"], r["failed"], r["loadavg"]))
        for name in ("nginx", "distenv"):
            best = min((r["p99_us"] for r in results["rate"] if r["server"] == name), default=0)
            md.append("\nBest p99 of the rounds, %s: %d us." % (name, best))
        if results["newconn"]:
            md.append("\nNew connections: every request on a new connection (a full TLS handshake "
                      "each, as the API server dials in a burst), 16 at a time, %d s each; the "
                      "peer (controller-runtime, --standalone) decodes each pod and denies it. "
                      "Server CPU per request, and distenv's socket reads and waits per "
                      "handshake:\n" % seconds)
            md.append("| round | case | nginx req/s | peer req/s | distenv req/s | nginx CPU us/req "
                      "| peer CPU us/req | distenv CPU us/req | distenv / nginx | distenv / peer "
                      "| reads, waits per handshake | failed |")
            md.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
            for r in results["newconn"]:
                cn, cp, cd = (r[k]["cpu_us_per_req"] for k in ("nginx", "peer", "distenv"))
                md.append("| %d | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | "
                          "%.1f, %.2f | %d |" % (
                              r["round"], r["case"], r["nginx"]["rps"], r["peer"]["rps"],
                              r["distenv"]["rps"], cn, cp, cd, cd / max(cn, 1e-9),
                              cd / max(cp, 1e-9), r["distenv"]["reads_per_handshake"],
                              r["distenv"]["waits_per_handshake"],
                              sum(r[k]["failed"] for k in ("nginx", "peer", "distenv"))))
        if results["idle"]:
            md.append("\nKept-alive requests (4 KB pod, 16 connections) alone and with %d idle "
                      "kept-alive TLS connections open beside them: server CPU per request.\n"
                      % results["idle"][0]["idle"])
            md.append("| round | server | alone us/req | beside idle us/req |")
            md.append("|---|---|---|---|")
            for r in results["idle"]:
                md.append("| %d | %s | %.1f | %.1f |" % (
                    r["round"], r["server"], r["alone"]["cpu_us_per_req"],
                    r["beside_idle"]["cpu_us_per_req"]))
        ra = results.get("rss_after", {})
        md.append("\ndistenv peak RSS (VmHWM): %s; after everything %.1f MiB (VmRSS %.1f MiB).\n" % (
            ", ".join("%.1f MiB after the %s runs" % (ra[c] / 1024, c) for c, _ in CASES if c in ra),
            results["rss"]["VmHWM_kb"] / 1024, results["rss"]["VmRSS_kb"] / 1024))
    md.append("Core cost (callgrind, one warm admission of an Indexed Job pod, all three "
              "frameworks):\n")
    md.append("| W | instructions | per rank since previous W |")
    md.append("|---|---|---|")
    for r in results["core"]:
        md.append("| %d | %d | %s |" % (r["W"], r["instructions"],
                                         "%.0f" % r["per_rank_since_prev"]
                                         if "per_rank_since_prev" in r else "-"))
    md.append("\nInstructions per admission of the bench bodies: " + ", ".join(
        "%s %d" % (k, v) for k, v in results["core_files"].items()) + ".\n")
    md.append("Wall time of the core (bench/core_cost, same bodies):\n\n```\n" +
              results["core_wall"] + "```")
    text = "\n".join(md) + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(text)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
