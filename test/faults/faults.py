#!/usr/bin/env python3
"""Soak and fault tier: the real distenv-webhook on loopback, real TLS.

Cases (each bounded in time, each cleans up its processes):
  soak          N admissions (default 1,000,000) over keep-alive connections after
                a warm-up: every answer 200 with the request's uid, RSS growth
                under 1 MiB, no error in the log
  valgrind      the server under memcheck: admissions, 400/404/405/413, aborted
                uploads, failed handshakes, SIGTERM: no error, no definite leak
  cert_swap     certificate and key replaced on disk (a Secret volume's ..data
                symlink swap) under load with fresh handshakes: no failed
                request, both certificates seen, the new one served afterwards
  sigterm       SIGTERM under load: in-flight requests complete, new connections
                are refused, exit 0 within the drain deadline
  drain_deadline  a request that never finishes: the drain waits for it the
                whole deadline, no less, and no more; exit 0
  slowloris     hundreds of idle and half-sent connections: real requests are
                still served, and the idle timeout closes every slow connection
  tls_refused   TLS 1.0/1.1 handshakes, plain HTTP and garbage on the TLS port
                are refused at once; the server keeps serving
  lookups       an API server that hangs, answers 500, 403 or 404: a clear
                denial within lookups.timeoutMs, and the server keeps serving,
                /healthz included, while look-ups hang

Prints one line per case and closes with "faults: N passed, N failed".
"""
import argparse
import hashlib
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)  # TLS 1.0/1.1 on purpose

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
import httpwire  # noqa: E402
import tlsflights  # noqa: E402
SNI = "distenv.distenv-system.svc"


def log(msg):
    print(msg, flush=True)


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def client_ctx(ca=None, version=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if ca:
        ctx.load_verify_locations(ca)
        ctx.check_hostname = True
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if version is not None:
        ctx.minimum_version = version
        ctx.maximum_version = version
    if version in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")  # let the client offer what we test
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def tls_connect(port, ctx=None, timeout=10.0):
    ctx = ctx or client_ctx()
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        return ctx.wrap_socket(raw, server_hostname=SNI)
    except Exception:
        raw.close()
        raise


def read_response(sock, timeout=15.0):
    """Reads one HTTP/1.1 response with Content-Length. Returns (status, headers, body)."""
    return httpwire.read_response(sock, error=Failed, timeout=timeout)


def request(port, method, path, body=b"", ctx=None, timeout=15.0, headers=None):
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx or client_ctx(),
                                    timeout=timeout)
    try:
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def with_uid(body, uid):
    d = json.loads(body)
    d["request"]["uid"] = uid
    return json.dumps(d, separators=(",", ":")).encode()


def peer_fp(port):
    s = tls_connect(port)
    try:
        return hashlib.sha256(s.getpeercert(binary_form=True)).hexdigest()
    finally:
        s.close()


def file_fp(crt):
    with open(crt) as f:
        pem = f.read()
    first = pem[:pem.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")]
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(first)).hexdigest()


def drained_and_closed(sock):
    """True when a plain socket's peer has closed (or reset) it, after reading what
    the peer sent before closing (a server's handshake flight); never blocks."""
    sock.setblocking(False)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


def closed_by_peer(sock):
    """True when the peer has closed (or reset) the connection; never blocks."""
    raw = sock
    try:
        r, _, _ = select.select([raw], [], [], 0)
    except (ValueError, OSError):
        return True
    if not r:
        return False
    try:
        if isinstance(sock, ssl.SSLSocket):
            sock.setblocking(False)
            try:
                data = sock.recv(1)
            except ssl.SSLWantReadError:
                return False
        else:
            data = sock.recv(1, socket.MSG_DONTWAIT)
        return data == b""
    except (ConnectionError, ssl.SSLError, OSError):
        return True


class Server:
    """distenv-webhook serve, with its log lines counted by level."""

    def __init__(self, binary, work, certdir, config="", extra=(), valgrind=None, name="srv",
                 stderr=None, preexec=None):
        self.port = free_port()
        self.work = work
        self.cfg = os.path.join(work, name + ".yaml")
        with open(self.cfg, "w") as f:
            f.write(config)
        cert = os.path.join(certdir, "tls.crt")
        key = os.path.join(certdir, "tls.key")
        argv = [binary, "serve", "--config", self.cfg, "--listen", "127.0.0.1:%d" % self.port,
                "--tls-cert", cert, "--tls-key", key] + list(extra)
        if valgrind:
            argv = valgrind + argv
        self.levels = {}
        self.lines = []      # warn and error lines, and the last few of any
        self.events = []
        self.event_fields = {}  # the last line of each event
        self.lock = threading.Lock()
        # stderr: an fd of the caller's instead of the log reader (then no events are seen)
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE if stderr is None else stderr,
                                     preexec_fn=preexec)
        self.reader = threading.Thread(target=self._read if stderr is None else lambda: None,
                                       daemon=True)
        self.reader.start()
        self.wait_ready(120 if valgrind else 20)

    def _read(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            lvl, ev, d = "other", None, None
            if line.startswith("{"):
                try:
                    d = json.loads(line)
                    lvl, ev = d.get("level", "other"), d.get("event")
                except ValueError:
                    pass
            with self.lock:
                self.levels[lvl] = self.levels.get(lvl, 0) + 1
                if lvl != "info" or ev not in (None, "admission"):
                    self.lines.append(line)
                    if ev:
                        self.events.append(ev)
                        self.event_fields[ev] = d
                    if len(self.lines) > 2000:
                        del self.lines[:1000]

    def wait_ready(self, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise Failed("server exited with %d: %s" % (self.proc.returncode, self.tail()))
            try:
                st, _ = request(self.port, "GET", "/healthz", timeout=5)
                if st == 200:
                    return
            except (OSError, ssl.SSLError, http.client.HTTPException):
                pass
            time.sleep(0.1)
        raise Failed("server not ready after %ds" % timeout)

    def wait_event(self, ev, timeout=15, after=0):
        """Waits until the log shows event ev (more than `after` times); True when it did."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if self.events.count(ev) > after:
                    return True
            time.sleep(0.05)
        return False

    def count(self, ev):
        with self.lock:
            return self.events.count(ev)

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def tail(self, n=8):
        with self.lock:
            return "\n      ".join(self.lines[-n:])

    def errors(self):
        with self.lock:
            return [l for l in self.lines if '"level":"error"' in l]

    def rss_kb(self, key="VmRSS"):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return -1

    def metrics(self):
        st, body = request(self.port, "GET", "/metrics")
        check(st == 200, "/metrics answered %d" % st)
        return body.decode()

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Sends sig (None: none, the caller already did) and waits for the exit code."""
        if sig is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            raise Failed("server did not exit within %ds of the signal" % timeout)
        self.reader.join(timeout=10)
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Suite:
    def __init__(self, args):
        self.a = args
        self.work = tempfile.mkdtemp(prefix="distenv-faults-")
        self.servers = []
        self.procs = []
        self.bodies = os.path.join(self.work, "bodies")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_reviews.py"),
                        self.bodies], check=True, stdout=subprocess.DEVNULL)
        self.certs_a = self.gen_certs("a")
        self.certs_b = self.gen_certs("b")
        # Fingerprints of the two leaf certificates, to tell which one a handshake served.
        self.fp_a = file_fp(os.path.join(self.certs_a, "tls.crt"))
        self.fp_b = file_fp(os.path.join(self.certs_b, "tls.crt"))
        # A mix of answers: patched, denied, skipped, patched with user env.
        self.mix = [os.path.join(self.bodies, "sts-4k.json")] + [
            os.path.join(ROOT, "test", "data", n + ".request.json")
            for n in ("denied-rank-too-high", "skipped-unlabelled", "sts-gpus-user-env")]
        with open(self.mix[0], "rb") as f:
            self.sts = f.read()

    def gen_certs(self, name):
        d = os.path.join(self.work, "certs-" + name)
        subprocess.run([self.a.binary, "certs", "--service", "distenv", "--namespace",
                        "distenv-system", "--out", d], check=True, stdout=subprocess.DEVNULL)
        return d

    def server(self, config="lookups:\n  enabled: false\n", extra=("--no-lookups",), **kw):
        kw.setdefault("name", "srv%d" % len(self.servers))
        s = Server(self.a.binary, self.work, kw.pop("certdir", self.certs_a), config, extra, **kw)
        self.servers.append(s)
        return s

    def loadgen(self, port, bodies, args, background=False):
        argv = [self.a.loadgen, "-p", str(port)]
        for b in bodies:
            argv += ["-b", b]
        argv += [str(x) for x in args]
        if background:
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.procs.append(p)
            return p
        r = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
        return self.loadgen_result(r.stdout, r.stderr)

    @staticmethod
    def loadgen_result(out, err):
        m = re.search(r"^JSON (.*)$", out, re.M)
        if m is None:
            raise Failed("loadgen printed no result: %s %s" % (out[-500:], err[-500:]))
        d = json.loads(m.group(1))
        d["text"] = out
        return d

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for s in self.servers:
            s.kill()
        shutil.rmtree(self.work, ignore_errors=True)

    # ------------------------------------------------------------------ cases

    def case_soak(self):
        n = self.a.soak
        # glibc's per-thread arenas settle after a few hundred thousand requests
        # (measured: +2.2 MiB over the first 300,000, then +0.3 MiB over 800,000).
        warm = 300000
        s = self.server()
        common = ["-c", 16, "-t", 2, "--max-seconds", 3000]
        w = self.loadgen(s.port, self.mix, ["-n", warm] + common)
        check(w["failed"] == 0 and w["ok"] == warm, "warm-up: %s" % w["text"])
        rss0 = s.rss_kb()
        t0 = time.monotonic()
        r = self.loadgen(s.port, self.mix, ["-n", n] + common)
        secs = time.monotonic() - t0
        rss1 = s.rss_kb()
        hwm = s.rss_kb("VmHWM")
        log("      %d admissions in %.1f s (%.0f/s) on 16 keep-alive connections; "
            "p50 %d us, p99 %d us; VmRSS %d -> %d KiB (%+d KiB), VmHWM %d KiB"
            % (r["requests"], secs, r["requests"] / secs, r["p50_us"], r["p99_us"], rss0, rss1,
               rss1 - rss0, hwm))
        check(r["failed"] == 0, "answers not as expected: %s" % r["text"])
        check(r["ok"] == n, "%d of %d answered" % (r["ok"], n))
        check(r["connections"] == 16, "connections reopened: %d" % r["connections"])
        check(rss1 - rss0 < 1024, "RSS grew by %d KiB over %d admissions" % (rss1 - rss0, n))
        m = s.metrics()
        total = sum(float(v) for v in re.findall(
            r'^distenv_admission_requests_total\{[^}]*\} (\S+)$', m, re.M))
        check(total >= n + warm, "metrics count %d admissions, want >= %d" % (total, n + warm))
        check(not s.errors(), "error lines in the log: %s" % s.errors()[:3])
        rc = s.stop()
        check(rc == 0, "exit %d" % rc)

    def case_valgrind(self):
        vlog = os.path.join(self.work, "valgrind.log")
        vg = ["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
              "--show-leak-kinds=definite", "--errors-for-leak-kinds=definite",
              "--track-origins=no", "--log-file=" + vlog]
        s = self.server(valgrind=vg, name="vg")
        n = self.a.valgrind_requests
        r = self.loadgen(s.port, self.mix + [os.path.join(self.bodies, "job-w1024.json")],
                         ["-n", n, "-c", 4, "--timeout", 60000, "--max-seconds", 900])
        check(r["failed"] == 0 and r["ok"] == n, "admissions under valgrind: %s" % r["text"])
        # The error paths: 400, 404, 405, 413, aborted uploads, failed handshakes.
        st, _ = request(s.port, "POST", "/mutate", b"{not json", timeout=60)
        check(st == 400, "bad JSON answered %d" % st)
        st, _ = request(s.port, "GET", "/nope", timeout=60)
        check(st == 404, "unknown path answered %d" % st)
        st, _ = request(s.port, "GET", "/mutate", timeout=60)
        check(st == 405, "GET /mutate answered %d" % st)
        st, _ = request(s.port, "GET", "/metrics", timeout=60)
        check(st == 200, "/metrics answered %d" % st)
        t = tls_connect(s.port, timeout=60)
        t.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n")
        st, _, _ = read_response(t, timeout=60)
        t.close()
        check(st == 413, "oversize answered %d" % st)
        for cut in (10, 2000):
            t = tls_connect(s.port, timeout=60)
            t.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(self.sts) + self.sts[:cut])
            time.sleep(0.2)
            t.close()
        for v in (ssl.TLSVersion.TLSv1_1,):
            try:
                tls_connect(s.port, client_ctx(version=v), timeout=60).close()
            except (ssl.SSLError, OSError):
                pass
        raw = socket.create_connection(("127.0.0.1", s.port), timeout=60)
        raw.sendall(b"GET / HTTP/1.1\r\n\r\n")
        raw.settimeout(60)
        try:
            raw.recv(100)
        except OSError:
            pass
        raw.close()
        st, _ = request(s.port, "POST", "/mutate", self.sts, timeout=60)
        check(st == 200, "after the error paths: %d" % st)
        rc = s.stop(timeout=180)
        with open(vlog) as f:
            vtext = f.read()
        log("      %d admissions (%.0f/s under memcheck) and every error path; exit %d; "
            "valgrind log %d bytes" % (n, r["rps"], rc, len(vtext)))
        check(rc == 0, "exit %d under valgrind: %s" % (rc, vtext[-3000:]))
        check("definitely lost" not in vtext and "Invalid" not in vtext
              and "uninitialised" not in vtext, "valgrind reports: %s" % vtext[-3000:])

    def secret_dir(self, certdir, ts, base=None, key_mode=None):
        """A Secret volume: ..data -> ..TS, tls.crt -> ..data/tls.crt."""
        base = base or os.path.join(self.work, "secret")
        os.makedirs(base, exist_ok=True)
        tsdir = os.path.join(base, ".." + ts)
        os.makedirs(tsdir)
        for f in ("tls.crt", "tls.key"):
            shutil.copy(os.path.join(certdir, f), os.path.join(tsdir, f))
        if key_mode is not None:
            os.chmod(os.path.join(tsdir, "tls.key"), key_mode)
        tmp = os.path.join(base, "..data_tmp")
        os.symlink(".." + ts, tmp)
        os.rename(tmp, os.path.join(base, "..data"))  # atomic, as the kubelet does
        for f in ("tls.crt", "tls.key"):
            link = os.path.join(base, f)
            if not os.path.islink(link):
                os.symlink(os.path.join("..data", f), link)
        return base

    def case_cert_swap(self):
        secret = self.secret_dir(self.certs_a, "2026_01_01_a")
        s = self.server(config="lookups:\n  enabled: false\ntls:\n  checkIntervalSeconds: 1\n",
                        certdir=secret, name="swap")
        fa, fb = self.fp_a, self.fp_b
        check(peer_fp(s.port) == fa, "certificate A not served at start")
        secs = 4 if self.a.quick else 8
        p = self.loadgen(s.port, self.mix, ["-d", secs, "-c", 8, "-t", 2, "-r", 10, "--certs"],
                         background=True)
        time.sleep(secs / 3)
        self.secret_dir(self.certs_b, "2026_01_02_b")
        out, err = p.communicate(timeout=secs + 120)
        r = self.loadgen_result(out, err)
        seen = dict(re.findall(r"^certificate sha256 ([0-9a-f]+): (\d+) handshakes$", out, re.M))
        log("      %d requests over %d connections (a new one every 10 requests); "
            "handshakes with the old certificate %s, with the new %s"
            % (r["requests"], r["connections"], seen.get(fa, 0), seen.get(fb, 0)))
        check(r["failed"] == 0, "requests failed during the swap: %s" % r["text"])
        check(fa in seen and fb in seen, "both certificates should be seen: %s" % seen)
        check(peer_fp(s.port) == fb, "the new certificate is not served after the swap")
        ctx = client_ctx(ca=os.path.join(self.certs_b, "ca.crt"))
        st, _ = request(s.port, "POST", "/mutate", self.sts, ctx=ctx)
        check(st == 200, "verified against the new CA: %d" % st)
        check(s.wait_event("certificate_reloaded"), "no certificate_reloaded event")
        check(s.stop() == 0, "exit code")

    def dated_certs(self, name, not_before, not_after):
        """A self-signed ECDSA pair valid from not_before to not_after (datetimes)."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
        key = ec.generate_private_key(ec.SECP256R1())
        subj = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, SNI)])
        crt = (x509.CertificateBuilder().subject_name(subj).issuer_name(subj)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.SubjectAlternativeName([x509.DNSName(SNI)]), critical=False)
               .sign(key, hashes.SHA256()))
        d = os.path.join(self.work, "certs-" + name)
        os.makedirs(d)
        with open(os.path.join(d, "tls.crt"), "wb") as f:
            f.write(crt.public_bytes(serialization.Encoding.PEM))
        with open(os.path.join(d, "tls.key"), "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
        return d

    def case_cert_validity(self):
        """An expired and a not-yet-valid pair never replace a valid one (kept, warned,
        counted); a pair that cannot be read is tried again every interval, so fixing
        its mode alone (no change of size, mtime or inode) is noticed."""
        import datetime
        now = datetime.datetime.now(datetime.timezone.utc)
        day = datetime.timedelta(days=1)
        expired = self.dated_certs("expired", now - 30 * day, now - day)
        future = self.dated_certs("future", now + day, now + 30 * day)
        # The server runs as nobody, so that a key of mode 0600 owned by root is unreadable.
        base = tempfile.mkdtemp(prefix="distenv-secret-")
        os.chmod(base, 0o755)
        os.chmod(self.work, 0o711)  # its config file
        secret = self.secret_dir(self.certs_a, "2026_03_01_a", base=base, key_mode=0o644)

        def nobody():
            os.setgid(65534)
            os.setuid(65534)
        try:
            s = self.server(config="lookups:\n  enabled: false\ntls:\n  checkIntervalSeconds: 1\n",
                            certdir=secret, name="validity", preexec=nobody)
            fa, fb = self.fp_a, self.fp_b
            res = []

            def failures():
                m = re.search(r'^distenv_certificate_reloads_total\{result="failure"\} (\d+)$',
                              s.metrics(), re.M)
                return int(m.group(1))

            for what, d, ts in (("expired", expired, "2026_03_02_x"),
                                ("not yet valid", future, "2026_03_03_f")):
                n0 = s.count("certificate_rejected")
                f0 = failures()
                self.secret_dir(d, ts, base=base, key_mode=0o644)
                check(s.wait_event("certificate_rejected", after=n0), "%s pair: no "
                      "certificate_rejected warning" % what)
                # two more intervals: retried, counted, still refused (waited for, bounded)
                f1 = failures()
                for _ in range(100):
                    if f1 >= f0 + 2:
                        break
                    time.sleep(0.1)
                    f1 = failures()
                fp = peer_fp(s.port)
                check(fp == fa, "%s pair replaced the valid one" % what)
                check(f1 >= f0 + 2, "%s pair: failures counted %d -> %d" % (what, f0, f1))
                msg = s.event_fields["certificate_rejected"].get("error", "")
                check(what in msg, "the warning does not say %r: %s" % (what, msg))
                res.append("%s: kept the valid pair, %d failures counted, warned: %s"
                           % (what, f1 - f0, msg.rsplit("/", 1)[-1]))
            # Unreadable, then fixed with chmod alone.
            n0 = s.count("certificate_reload_failed")
            self.secret_dir(self.certs_b, "2026_03_04_b", base=base, key_mode=0o600)
            check(s.wait_event("certificate_reload_failed", after=n0),
                  "unreadable key: no certificate_reload_failed warning")
            check(peer_fp(s.port) == fa, "the unreadable pair changed the certificate")
            key = os.path.join(base, "..2026_03_04_b", "tls.key")
            st0 = os.stat(key)
            n1 = s.count("certificate_reloaded")
            os.chmod(key, 0o644)
            st1 = os.stat(key)
            check((st0.st_size, st0.st_mtime_ns, st0.st_ino) ==
                  (st1.st_size, st1.st_mtime_ns, st1.st_ino), "chmod changed more than the mode")
            check(s.wait_event("certificate_reloaded", after=n1), "the key made readable by "
                  "chmod was not picked up")
            check(peer_fp(s.port) == fb, "the fixed pair is not served")
            res.append("unreadable key: refused, then served after chmod 0644 alone")
            st, _ = request(s.port, "POST", "/mutate", self.sts)
            check(st == 200, "after the reloads: %d" % st)
            for line in res:
                log("      " + line)
            check(s.stop() == 0, "exit code")
        finally:
            shutil.rmtree(base, ignore_errors=True)

    def case_sigterm(self):
        drain = 8
        s = self.server(config="lookups:\n  enabled: false\nserver:\n  drainTimeoutSeconds: %d\n"
                        % drain, name="term")
        p = self.loadgen(s.port, self.mix, ["-d", 30, "-c", 16, "-t", 2, "--timeout", 20000],
                         background=True)
        # Requests in flight: headers and half of the body sent.
        slow = []
        for i in range(20):
            body = with_uid(self.sts, "inflight-%02d" % i)
            t = tls_connect(s.port)
            t.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body[:len(body) // 2])
            slow.append((t, body, "inflight-%02d" % i))
        # Waits (bounded) until the server holds the 20 half-sent requests before the
        # signal, then for the drain to start before trying new connections.
        for _ in range(200):
            m = re.search(r"^distenv_inflight_requests (\d+)$", s.metrics(), re.M)
            if m and int(m.group(1)) >= 20:
                break
            time.sleep(0.05)
        t_sig = time.monotonic()
        s.proc.send_signal(signal.SIGTERM)
        check(s.wait_event("drain_start"), "no drain_start after SIGTERM")
        # New connections: refused, not left hanging in a backlog nobody accepts.
        refused = hung = accepted = 0
        for _ in range(3):
            try:
                c = tls_connect(s.port, timeout=1)
                c.close()
                accepted += 1
            except ConnectionRefusedError:
                refused += 1
            except (socket.timeout, TimeoutError):
                hung += 1
            except (ssl.SSLError, OSError):
                refused += 1  # reset during the handshake: refused as well
            time.sleep(0.1)
        check(s.proc.poll() is None, "server exited with requests in flight")
        answers = 0
        for t, body, uid in slow:
            t.sendall(body[len(body) // 2:])
            st, h, out = read_response(t)
            t.close()
            check(st == 200, "in-flight request %s answered %d" % (uid, st))
            check(json.loads(out)["response"]["uid"] == uid, "in-flight answer for %s" % uid)
            check(h.get("connection", "").lower() == "close",
                  "answer while draining lacks Connection: close")
            answers += 1
        rc = s.stop(sig=None, timeout=drain + 30)
        took = time.monotonic() - t_sig
        out, err = p.communicate(timeout=60)
        r = self.loadgen_result(out, err)
        log("      SIGTERM under load (%d req/s): %d in-flight requests answered 200; new "
            "connections: %d refused, %d hung, %d accepted; exit %d after %.2f s (deadline %d s); "
            "load: %d ok, %d bad answers, %d cut by the close race, %d refused reconnects"
            % (r["rps"], answers, refused, hung, accepted, rc, took, drain, r["ok"],
               r["bad_status"] + r["bad_body"], r["io_errors"], r["connect_errors"]))
        check(rc == 0, "exit code %d after SIGTERM" % rc)
        # Every connection closed before the deadline: the drain ended by itself.
        check("drain_timeout" not in s.events and "drain_end" in s.events,
              "the drain ran to its %d s deadline: %s" % (drain, s.event_fields.get("drain_end")))
        check(r["bad_status"] == 0 and r["bad_body"] == 0, "bad answers under load: %s" % r["text"])
        # The drain keeps serving open connections, each answer with Connection: close:
        # no request sent on a kept-alive connection is cut.
        check(r["io_errors"] == 0, "requests cut by the drain: %s" % r["text"])
        check(refused == 3, "new connections during the drain: %d refused, %d hung, %d accepted"
              % (refused, hung, accepted))

    def case_drain_keepalive(self):
        """SIGTERM while clients send every 20 ms on kept-alive connections: the drain
        keeps serving them with Connection: close; no request sent on an open connection
        is lost (a refused reconnect is not a loss: nothing was sent). With look-ups on,
        the drain deadline also ends the look-ups running and queued."""
        drain, nclients = 5, 8
        s = self.server(config="lookups:\n  enabled: false\nserver:\n  drainTimeoutSeconds: %d\n"
                        % drain, name="ka")
        stats = {"ok": 0, "lost": 0, "closed": 0, "refused": 0, "reconnected": 0}
        lock = threading.Lock()
        stop = time.monotonic() + 30

        def client(i):
            t, n = tls_connect(s.port), 0
            while time.monotonic() < stop:
                uid = "ka-%d-%d" % (i, n)
                n += 1
                body = with_uid(self.sts, uid)
                try:
                    t.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: "
                              b"application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
                              + body)
                    st, h, out = read_response(t, timeout=10)
                    good = st == 200 and json.loads(out)["response"]["uid"] == uid
                except (Failed, OSError, ssl.SSLError, ValueError):
                    good = False
                with lock:
                    stats["ok" if good else "lost"] += 1
                if not good:
                    break
                if h.get("connection", "").lower() == "close":
                    t.close()
                    with lock:
                        stats["closed"] += 1
                    try:
                        t = tls_connect(s.port, timeout=2)
                        with lock:
                            stats["reconnected"] += 1
                    except (OSError, ssl.SSLError):
                        with lock:
                            stats["refused"] += 1
                        return
                time.sleep(0.02)
            t.close()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(nclients)]
        for th in threads:
            th.start()
        for _ in range(300):  # bounded: every client answered a few times first
            with lock:
                if stats["ok"] >= 5 * nclients:
                    break
            time.sleep(0.05)
        t_sig = time.monotonic()
        s.proc.send_signal(signal.SIGTERM)
        rc = s.stop(sig=None, timeout=drain + 30)
        took = time.monotonic() - t_sig
        for th in threads:
            th.join(timeout=40)
        log("      %d clients every 20 ms: %d answered, %d lost, %d told Connection: close, "
            "%d reconnects refused, %d accepted; exit %d after %.2f s (drain %d s)"
            % (nclients, stats["ok"], stats["lost"], stats["closed"], stats["refused"],
               stats["reconnected"], rc, took, drain))
        check(rc == 0, "exit %d" % rc)
        check(stats["lost"] == 0, "requests lost on kept-alive connections: %d" % stats["lost"])
        check(stats["closed"] == nclients, "%d of %d clients told Connection: close"
              % (stats["closed"], nclients))

        # Look-ups: 24 that hang (10 s deadline), 4 workers; the drain (4 s) ends them
        # all, running and queued, as denials that reach their clients.
        api = FakeAPI(self.certs_b)
        got = {}
        try:
            s = self.server(config="lookups:\n  enabled: true\n  timeoutMs: 10000\nserver:\n"
                            "  threads: 1\n  drainTimeoutSeconds: 4\n",
                            extra=("--kubeconfig", self.kubeconfig(api)), name="kalook")

            def one(i):
                try:
                    got[i] = request(s.port, "POST", "/mutate",
                                     self.lookup_pod("hang-d%d" % i, "d%d" % i), timeout=60)
                except (OSError, ssl.SSLError, http.client.HTTPException) as e:
                    got[i] = (0, repr(e).encode())  # reported below
            threads = [threading.Thread(target=one, args=(i,)) for i in range(24)]
            for th in threads:
                th.start()
            # Waits (bounded) until the server holds all 24 (the 4 workers' look-ups at
            # the API server, 20 queued behind them): a client still connecting at the
            # signal would be refused, which is not what this part checks.
            for _ in range(200):
                m = re.search(r"^distenv_inflight_requests (\d+)$", s.metrics(), re.M)
                if api.requests >= 4 and m and int(m.group(1)) >= 24:
                    break
                time.sleep(0.05)
            s.proc.send_signal(signal.SIGTERM)
            rc = s.stop(sig=None, timeout=60)
            for th in threads:
                th.join(timeout=60)
        finally:
            api.close()
        bad = []
        for i in range(24):
            st, body = got.get(i, (0, b"no answer"))
            try:
                r = json.loads(body)["response"]
            except (ValueError, KeyError, TypeError):
                r = None
            msg = (r or {}).get("status", {}).get("message", "")
            if not (st == 200 and r["uid"] == "d%d" % i and r["allowed"] is False
                    and msg.startswith("distenv:") and "hang-d%d" % i in msg):
                bad.append("d%d: %d %s" % (i, st, body[:200]))
        end = s.event_fields.get("drain_end", {})
        log("      24 hanging look-ups (10 s deadline) on 4 workers, drain 4 s: %d answered "
            "with a denial naming the workload; exit %d; drain_end %s"
            % (24 - len(bad), rc, {k: end.get(k) for k in ("inflight", "millis")}))
        check(rc == 0, "exit %d with look-ups queued" % rc)
        # Without the drain's bound each would wait its own 10 s (24 / 4 x 10 s = 60 s)
        # and the drain's end would cut them: every answer a denial is the check.
        check(not bad, "look-ups ended by the drain without a denial: %s" % bad[:3])
        check(end.get("inflight") == 0, "the drain's deadline came with look-ups still in "
              "flight (their answers cut): %s" % end)

    def case_drain_deadline(self):
        """A request that never finishes: the deadline ends the drain, still exit 0."""
        short = 2
        s2 = self.server(config="lookups:\n  enabled: false\nserver:\n  drainTimeoutSeconds: %d\n"
                         % short, name="term2")
        t = tls_connect(s2.port)
        t.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{"
                  % len(self.sts))
        for _ in range(200):  # bounded: the server holds the request
            m = re.search(r"^distenv_inflight_requests (\d+)$", s2.metrics(), re.M)
            if m and int(m.group(1)) >= 1:
                break
            time.sleep(0.05)
        t0 = time.monotonic()
        s2.proc.send_signal(signal.SIGTERM)
        rc = s2.stop(sig=None, timeout=short + 30)
        took = time.monotonic() - t0
        t.close()
        log("      a request stuck mid-body: exit %d after %.2f s (deadline %d s)"
            % (rc, took, short))
        check(rc == 0, "exit %d with a stuck request" % rc)
        # The deadline ended it (its event), not a later cleanup.
        check("drain_timeout" in s2.events, "no drain_timeout event")
        # The server's own clock: the drain must not end before its deadline either.
        waited = s2.event_fields.get("drain_end", {}).get("millis", -1)
        check(waited >= short * 1000 - 60, "the drain gave up after %d ms, deadline %d ms"
              % (waited, short * 1000))

    def case_body_budget(self):
        """Many large half-sent bodies: the bytes held stay within
        limits.maxBufferedBodyBytes (503 past it), RSS under a ceiling, and real requests
        are served once they go."""
        budget, mib = 32, 1024 * 1024
        n = 12 if self.a.quick else 24
        s = self.server(config="lookups:\n  enabled: false\nlimits:\n  maxBodyBytes: %d\n"
                        "  maxBufferedBodyBytes: %d\n" % (7 * mib, budget * mib), name="budget")
        rss0 = s.rss_kb()
        held, early = [], 0
        body = b"[" + b"0," * (7 * mib // 2)
        for i in range(n):
            t = tls_connect(s.port)
            t.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % (7 * mib))
            try:
                t.sendall(body[:7 * mib - 1024])  # all but the last KiB
            except (OSError, ssl.SSLError):
                pass  # answered 503 at the headers and closed
            held.append(t)

        def counted():
            m = s.metrics()
            b = int(re.search(r"^distenv_buffered_body_bytes (\d+)$", m, re.M).group(1))
            sp = int(re.search(r'^distenv_overload_rejections_total\{reason="body_budget"\} '
                               r'(\d+)$', m, re.M).group(1))
            return b, sp

        # Each held body is counted at its buffer's size, 7 MiB (+1 for its NUL): the
        # budget holds exactly budget // 7 of them, and every other one is turned away.
        # Waits (bounded) until the server has read every connection's bytes: each one
        # either holds its 7 MiB or was turned away.
        fits = budget // 7
        for _ in range(200):
            buffered, spent = counted()
            if buffered // (7 * mib) + spent >= n:
                break
            time.sleep(0.1)
        for t in held:
            if closed_by_peer(t):
                early += 1
        hwm = s.rss_kb("VmHWM")
        st, _ = request(s.port, "GET", "/healthz")
        for t in held:
            t.close()
        after = 0
        for _ in range(100):  # bounded: the server sees the closes
            m = s.metrics()
            after = int(re.search(r"^distenv_buffered_body_bytes (\d+)$", m, re.M).group(1))
            if after == 0:
                break
            time.sleep(0.1)
        st2, _ = request(s.port, "POST", "/mutate", self.sts)
        log("      %d connections each holding 7 MiB less 1 KiB of a 7 MiB body, budget %d MiB: "
            "%.1f MiB held, %d turned away (%d closed at the headers), VmHWM %d MiB "
            "(%d MiB at start); after they close %d bytes held, an admission %d"
            % (n, budget, buffered / mib, spent, early, hwm // 1024, rss0 // 1024, after, st2))
        check(buffered <= budget * mib, "%d bytes held, budget %d MiB" % (buffered, budget))
        # From both sides: a smaller budget holds fewer bodies, a larger one turns fewer away.
        check(buffered // (7 * mib) == fits and spent == n - fits,
              "%d x 7 MiB bodies and a %d MiB budget: %d bytes held (%d bodies), %d turned "
              "away; want %d held, %d turned away" % (n, budget, buffered, buffered // (7 * mib),
                                                      spent, fits, n - fits))
        check(hwm - rss0 < (budget + 24) * 1024, "VmHWM grew by %d MiB with a %d MiB budget"
              % ((hwm - rss0) // 1024, budget))
        check(st == 200, "/healthz while the budget was spent: %d" % st)
        check(after == 0, "%d bytes still counted after every connection closed" % after)
        check(st2 == 200, "after the bodies went: %d" % st2)
        check(s.stop() == 0, "exit code")

    def case_conn_flood(self):
        """Connections beyond maxConnections (idle TCP, idle TLS, ClientHellos, heads and
        bodies trickled a byte at a time) from many loopback addresses: the per-address
        limit refuses, at the limit the oldest connection without a request makes room,
        real reviews and probes are answered, everything is counted and warned about,
        and the head, body and idle deadlines close every slow connection."""
        maxc, per_ip, head_s, body_s, idle_s = 120, 50, 3, 4, 5
        probe = free_port()
        s = self.server(config="lookups:\n  enabled: false\nserver:\n  maxConnections: %d\n"
                        "  maxConnectionsPerIP: %d\n  headerTimeoutSeconds: %d\n"
                        "  requestTimeoutSeconds: %d\n  idleTimeoutSeconds: %d\n"
                        "  probeListen: \"127.0.0.1:%d\"\n"
                        % (maxc, per_ip, head_s, body_s, idle_s, probe), name="flood")

        def tcp(src):
            c = socket.socket()
            c.bind((src, 0))
            c.settimeout(5)
            c.connect(("127.0.0.1", s.port))
            return c

        def tls(src):
            return client_ctx().wrap_socket(tcp(src), server_hostname=SNI)

        def probe_get(path):
            c = http.client.HTTPConnection("127.0.0.1", probe, timeout=5)
            try:
                c.request("GET", path)
                r = c.getresponse()
                return r.status
            finally:
                c.close()

        def metric(name):
            m = re.search(r"^%s (\d+)$" % re.escape(name), s.metrics(), re.M)
            return int(m.group(1)) if m else -1

        res = []
        # One address past its limit: the rest refused at once.
        one = []
        for _ in range(per_ip + 40):
            try:
                one.append(tcp("127.0.0.2"))
            except OSError:
                pass
        # Waits (bounded) for the refusals to be counted, then for the server's closes of
        # as many connections to reach this end.
        refused_ip = left = -1
        for _ in range(100):
            refused_ip = metric('distenv_overload_rejections_total{reason="per_ip_limit"}')
            left = sum(1 for c in one if not closed_by_peer(c))
            if refused_ip >= 40 and len(one) - left >= refused_ip:
                break
            time.sleep(0.1)
        res.append("%d connections from one address: %d kept (limit %d), %d refused"
                   % (len(one), left, per_ip, refused_ip))
        # Exact, from both sides: the accept policy counts a connection from the moment
        # it passes, on one thread, so the limit cannot be passed at a race.
        check(len(one) == per_ip + 40 and left == per_ip and refused_ip == 40,
              "per-address limit %d: of %d connections %d kept, %d refused (want %d, 40)"
              % (per_ip, len(one), left, refused_ip, per_ip))
        for c in one:
            c.close()

        # Many addresses, many kinds of slow connection, past the limit.
        slow = {"tcp idle": [], "tls idle": [], "ClientHello trickle": [], "head trickle": [],
                "body trickle": [], "idle then head trickle": []}
        trickle_bytes = {"ClientHello trickle": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"
                         + b"\x00" * 200, "head trickle": b"POST /mutate HTTP/1.1\r\nHost: x\r\nX: "
                         + b"a" * 200, "body trickle": b"b" * 200,
                         "idle then head trickle": b"GET /healthz HTTP/1.1\r\nX: " + b"a" * 200}
        stop = threading.Event()
        opened = [0]
        sources = set()

        def open_one(kind, i):
            src = "127.0.%d.%d" % (10 + i % 40, 1 + i // 40 % 200)
            sources.add(src)
            if kind == "tcp idle":
                return tcp(src)
            c = tls(src) if kind != "ClientHello trickle" else tcp(src)
            if kind == "body trickle":
                c.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
            elif kind == "idle then head trickle":
                c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                read_response(c)
            return c

        def flood():
            i = 0
            end = time.monotonic() + 60
            while not stop.is_set() and time.monotonic() < end:
                for kind, lst in slow.items():
                    if len(lst) < (12 if kind != "tcp idle" else 150):
                        try:
                            lst.append(open_one(kind, i))
                            opened[0] += 1
                        except (OSError, ssl.SSLError, Failed):
                            pass
                        i += 1
                time.sleep(0.002)

        def trickle():
            end = time.monotonic() + 90
            pos = {}
            while not stop.is_set() and time.monotonic() < end:
                for kind, data in trickle_bytes.items():
                    for c in list(slow[kind]):
                        k = id(c)
                        n = pos.get(k, 0)
                        try:
                            c.send(data[n % len(data):n % len(data) + 1])
                            pos[k] = n + 1
                        except (OSError, ssl.SSLError, ValueError):
                            pass
                time.sleep(0.3)

        tf = threading.Thread(target=flood, daemon=True)
        tt = threading.Thread(target=trickle, daemon=True)
        tf.start()
        time.sleep(1.0)
        tt.start()
        r = self.loadgen(s.port, [self.mix[0]], ["-d", 2, "-c", 8, "-t", 2, "--timeout", 10000])
        p_h, p_r = probe_get("/healthz"), probe_get("/readyz")
        st, _ = request(s.port, "GET", "/healthz", timeout=10)
        open_now = metric("distenv_open_connections")
        evicted = metric('distenv_overload_rejections_total{reason="evicted"}')
        refused = metric('distenv_overload_rejections_total{reason="connection_limit"}')
        stop.set()
        tf.join(timeout=10)
        res.append("flood of %d slow connections from %d addresses, limit %d: %d open, "
                   "%d evicted, %d refused; real reviews alongside: %d ok, %d failed (%.0f req/s);"
                   " probes on their own port: /healthz %d /readyz %d; /healthz on the webhook "
                   "port %d" % (opened[0], len(sources), maxc, open_now, evicted, refused, r["ok"],
                                r["failed"], r["rps"], p_h, p_r, st))
        log("      " + res[-1])
        check(r["failed"] == 0 and r["ok"] > 0, "real reviews failed: %s" % r["text"])
        check(p_h == 200 and p_r == 200, "probe port: /healthz %d /readyz %d" % (p_h, p_r))
        check(st == 200, "/healthz on the full webhook port: %d" % st)
        check(0 <= open_now <= maxc + 16, "%d connections open, limit %d" % (open_now, maxc))
        check(evicted > 0, "no connection evicted at the limit")
        check(s.wait_event("connection_limit_reached", timeout=12),
              "no connection_limit_reached warning")

        # Every slow connection is closed by its deadline, trickling or not.
        t0 = time.monotonic()
        bound = max(head_s, body_s, idle_s) * 2 + 5
        still = {}
        while time.monotonic() < t0 + bound:
            still = {k: sum(1 for c in v if not closed_by_peer(c)) for k, v in slow.items()}
            if sum(still.values()) == 0:
                break
            time.sleep(0.5)
        took = time.monotonic() - t0
        stop.set()
        tt.join(timeout=10)
        for v in slow.values():
            for c in v:
                c.close()
        timeouts = {ph: metric('distenv_connection_timeouts_total{phase="%s"}' % ph)
                    for ph in ("head", "body", "idle")}
        res.append("after the flood: all slow connections closed within %.1f s (head %d s, "
                   "body %d s, idle %d s), still open %s; timeouts counted %s"
                   % (took, head_s, body_s, idle_s, {k: v for k, v in still.items() if v}
                      or "none", timeouts))
        log("      " + res[0])
        log("      " + res[-1])
        check(sum(still.values()) == 0, "slow connections outlived their deadlines: %s" % still)
        check(all(v > 0 for v in timeouts.values()), "timeouts not counted by phase: %s"
              % timeouts)
        st, _ = request(s.port, "POST", "/mutate", self.sts)
        check(st == 200, "after the flood: %d" % st)
        check(s.stop() == 0, "exit code")

    def case_conn_limit(self):
        """server.maxConnections, exactly: with every connection mid-body (none may be
        evicted), the limit's connections are held and every one past it is refused."""
        maxc, extra = 24, 10
        part = len(self.sts) // 2  # a strict prefix: the body is never complete
        s = self.server(config="lookups:\n  enabled: false\nserver:\n  maxConnections: %d\n"
                        "  maxConnectionsPerIP: 100000\n  requestTimeoutSeconds: 120\n"
                        % maxc, name="limit")
        # Waits (bounded) until the readiness checks' connections are gone on the
        # server's side too (only the scrape's own is open): none is left to evict.
        for _ in range(100):
            m = re.search(r"^distenv_open_connections (\d+)$", s.metrics(), re.M)
            if m and int(m.group(1)) <= 1:
                break
            time.sleep(0.05)
        held = []
        for i in range(maxc):
            # Expect: 100-continue: the interim answer comes once the server has the
            # request's head, so the connection is in its body phase (not evictable).
            try:
                t = tls_connect(s.port, timeout=10)
                t.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                          b"\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n"
                          % len(self.sts))
                t.settimeout(10)
                got = b""
                while b"\r\n\r\n" not in got:
                    chunk = t.recv(1024)
                    if not chunk:
                        break
                    got += chunk
                if not got.startswith(b"HTTP/1.1 100"):
                    t.close()
                    break
                t.sendall(self.sts[:part])
                held.append(t)
            except (OSError, ssl.SSLError):
                break
        # Each connection past the limit is refused: every held one is mid-body, so
        # none can be closed to make room.
        more = []
        for i in range(extra):
            try:
                more.append(socket.create_connection(("127.0.0.1", s.port), timeout=5))
            except OSError:
                pass
        # Waits (bounded: the warning comes at most every 10 s) until the warnings count
        # every connection past the limit; /metrics is not asked meanwhile (its own
        # connection would be one more past the limit).
        def turned():
            n = 0
            with s.lock:
                for line in s.lines:
                    if '"event":"connection_limit_reached"' in line:
                        d = json.loads(line)
                        n += d.get("refused", 0) + d.get("evicted", 0)
            return n
        for _ in range(500):
            if turned() >= extra:
                break
            time.sleep(0.05)
        gone = 0
        for _ in range(100):  # bounded: the server's closes reach this end
            gone = sum(1 for c in more if closed_by_peer(c))
            if gone == len(more):
                break
            time.sleep(0.05)
        kept = sum(1 for t in held if not closed_by_peer(t))
        # the held requests complete: still served
        served = 0
        for i, t in enumerate(held):
            try:
                t.sendall(self.sts[part:])
                st, _, out = read_response(t, timeout=20)
                served += st == 200 and b'"allowed"' in out
            except (OSError, ssl.SSLError, Failed):
                pass
            t.close()
        for c in more:
            c.close()
        n_turned = turned()
        log("      limit %d: %d connections held mid-body, %d kept, %d answered 200; %d more: "
            "%d closed by the server, %d counted as refused or evicted"
            % (maxc, len(held), kept, served, len(more), gone, n_turned))
        # From both sides: a smaller limit holds fewer, a larger one turns fewer away.
        check(len(held) == maxc and kept == maxc and served == maxc,
              "limit %d: %d connections reached their body, %d kept, %d answered"
              % (maxc, len(held), kept, served))
        check(len(more) == extra and gone == extra and n_turned == extra,
              "limit %d reached: %d more connections, %d closed by the server, %d counted"
              % (maxc, len(more), gone, n_turned))
        check(s.stop() == 0, "exit code")

    def case_slowloris(self):
        idle = 3
        # One client address for all: the per-address limit is case conn_flood's.
        s = self.server(config="lookups:\n  enabled: false\nserver:\n  idleTimeoutSeconds: %d\n"
                        "  maxConnectionsPerIP: 100000\n" % idle, name="slow")
        base = self.loadgen(s.port, [self.mix[0]], ["-d", 2, "-c", 8, "-t", 2])
        check(base["failed"] == 0, "baseline: %s" % base["text"])
        slow = {"tcp idle": [], "half ClientHello": [], "tls idle": [], "half headers": [],
                "half body": []}
        n = {"tcp idle": 150, "half ClientHello": 100, "tls idle": 100, "half headers": 100,
             "half body": 50}
        if self.a.quick:
            n = {k: v // 2 for k, v in n.items()}
        for _ in range(n["tcp idle"]):
            slow["tcp idle"].append(socket.create_connection(("127.0.0.1", s.port)))
        for _ in range(n["half ClientHello"]):
            c = socket.create_connection(("127.0.0.1", s.port))
            c.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
            slow["half ClientHello"].append(c)
        for _ in range(n["tls idle"]):
            slow["tls idle"].append(tls_connect(s.port))
        for _ in range(n["half headers"]):
            c = tls_connect(s.port)
            c.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Ty")
            slow["half headers"].append(c)
        for _ in range(n["half body"]):
            c = tls_connect(s.port)
            c.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                      % len(self.sts) + self.sts[:1000])
            slow["half body"].append(c)
        total = sum(len(v) for v in slow.values())
        t_last = time.monotonic()
        r = self.loadgen(s.port, [self.mix[0]], ["-d", 2, "-c", 8, "-t", 2])
        log("      %d slow connections open; real requests alongside: %.0f req/s p99 %d us "
            "(alone: %.0f req/s p99 %d us), %d failed"
            % (total, r["rps"], r["p99_us"], base["rps"], base["p99_us"], r["failed"]))
        check(r["failed"] == 0 and r["ok"] > 0, "real requests starved: %s" % r["text"])
        # Every slow connection is closed by the server's idle timeout.
        bound = idle * 3 + 15
        end = time.monotonic() + bound
        open_left = {}
        while time.monotonic() < end:
            open_left = {k: sum(1 for c in v if not closed_by_peer(c)) for k, v in slow.items()}
            if sum(open_left.values()) == 0:
                break
            time.sleep(0.5)
        took = time.monotonic() - t_last
        for v in slow.values():
            for c in v:
                c.close()
        log("      all closed by the server within %.1f s of the last one opening (idle timeout %d s); "
            "still open: %s" % (took, idle, {k: v for k, v in open_left.items() if v} or "none"))
        check(sum(open_left.values()) == 0, "slow connections not closed after %d s: %s"
              % (bound, open_left))
        st, _ = request(s.port, "POST", "/mutate", self.sts)
        check(st == 200, "after the slow connections: %d" % st)
        check(s.stop() == 0, "exit code")

    def case_stalled_handshakes(self):
        """Clients that stop mid-handshake: 200 after (half of) a ClientHello, 200 after
        the server's first flight, each from an address of its own group, and one
        address that keeps opening such connections. distenv's CPU stays near zero
        while they wait, every other client is answered, each stalled connection is
        closed at server.handshakeTimeoutSeconds (the shipped 5 s, before the 10 s
        header deadline), and the address that keeps opening is held at
        server.maxConnectionsPerIP."""
        per_ip = 250
        s = self.server(config="lookups:\n  enabled: false\nserver:\n  maxConnectionsPerIP: %d\n"
                        % per_ip, name="stall")
        ctx = client_ctx()
        n = 50 if self.a.quick else 100

        def dial(src):
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.bind((src, 0))
            c.settimeout(10)
            c.connect(("127.0.0.1", s.port))
            return c

        hello = tlsflights.client_hello(ctx, SNI)[3]
        stalled = {"half ClientHello": [], "ClientHello": [], "after the server's flight": []}
        t_open = time.monotonic()
        for _ in range(n):
            c = dial("127.0.0.2")
            c.sendall(hello[:len(hello) // 2])
            stalled["half ClientHello"].append(c)
            c = dial("127.0.0.2")
            c.sendall(hello)
            stalled["ClientHello"].append(c)
        for _ in range(2 * n):
            c = dial("127.0.0.3")
            obj, inc, out, first = tlsflights.client_hello(ctx, SNI)
            c.sendall(first)
            while True:  # the server's whole flight in; the client's Finished never sent
                inc.write(c.recv(65536))
                try:
                    obj.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    pass
            stalled["after the server's flight"].append(c)
        # One address that keeps opening stalled handshakes: held at the per-address limit.
        flood, refused = [], 0
        for _ in range(per_ip + 150):
            try:
                c = dial("127.0.0.4")
                c.sendall(hello)
                flood.append(c)
            except OSError:
                refused += 1
        time.sleep(1.0)
        flood_open = sum(1 for c in flood if not drained_and_closed(c))
        total = sum(len(v) for v in stalled.values())
        t_last = time.monotonic()
        cpu0 = s.cpu_seconds()
        time.sleep(3.0)
        cpu = s.cpu_seconds() - cpu0
        r = self.loadgen(s.port, [self.mix[0]], ["-d", 2, "-c", 8, "-t", 2])
        log("      %d stalled handshakes (%s) + %d from one address (%d kept open, limit %d): "
            "distenv used %.2f s of CPU in 3 s; real requests alongside: %.0f req/s, %d failed"
            % (total, ", ".join("%d %s" % (len(v), k) for k, v in stalled.items()),
               len(flood) + refused, flood_open, per_ip, cpu, r["rps"], r["failed"]))
        check(cpu < 0.3, "%.2f s of CPU in 3 s while %d handshakes stalled (want near zero)"
              % (cpu, total + flood_open))
        check(r["failed"] == 0 and r["ok"] > 0, "real requests beside them: %s" % r["text"])
        check(flood_open <= per_ip, "%d connections from one address kept open, limit %d"
              % (flood_open, per_ip))
        check(flood_open >= per_ip // 2, "only %d connections from one address kept open: "
              "the limit is %d" % (flood_open, per_ip))
        # Closed at the handshake deadline (5 s from each accept), not the header one (10 s).
        end = t_last + 8.0
        open_left = {}
        while time.monotonic() < end:
            open_left = {k: sum(1 for c in v if not drained_and_closed(c)) for k, v in stalled.items()}
            if sum(open_left.values()) == 0:
                break
            time.sleep(0.25)
        first_closed = time.monotonic() - t_open
        for c in flood + [c for v in stalled.values() for c in v]:
            c.close()
        log("      all closed %.1f s after the first opened (handshake timeout 5 s); still open: %s"
            % (first_closed, {k: v for k, v in open_left.items() if v} or "none"))
        check(sum(open_left.values()) == 0, "stalled handshakes still open %.1f s after the "
              "last opened: %s" % (time.monotonic() - t_last, open_left))
        st, body = request(s.port, "GET", "/metrics")
        got = re.search(rb'^distenv_connection_timeouts_total\{phase="handshake"\} (\S+)$', body,
                        re.M)
        check(st == 200 and got is not None and float(got.group(1)) >= total,
              "handshake timeouts counted: %r, want at least %d" % (got and got.group(1), total))
        check(s.stop() == 0, "exit code")

    def case_tls_refused(self):
        s = self.server(name="tls")
        res = []
        for v in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
            t0 = time.monotonic()
            try:
                c = tls_connect(s.port, client_ctx(version=v), timeout=5)
                got = "accepted %s" % c.version()
                c.close()
            except (ssl.SSLError, ConnectionError) as e:
                got = "refused (%s)" % (getattr(e, "reason", None) or type(e).__name__)
            except (socket.timeout, TimeoutError):
                got = "hung"
            res.append("%s: %s in %.0f ms" % (v.name, got, (time.monotonic() - t0) * 1000))
            check(got.startswith("refused"), "%s handshake: %s" % (v.name, got))
        for v in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            c = tls_connect(s.port, client_ctx(version=v))
            check(c.version() == {"TLSv1_2": "TLSv1.2", "TLSv1_3": "TLSv1.3"}[v.name],
                  "negotiated %s" % c.version())
            c.close()
        for name, data in (("plain HTTP", b"POST /mutate HTTP/1.1\r\nHost: x\r\n"
                                          b"Content-Length: 2\r\n\r\n{}"),
                           ("SSLv2 hello", b"\x80\x2e\x01\x00\x02\x00\x15\x00\x00\x00\x10" +
                            b"\x00" * 37),
                           # Not random: a first byte with the high bit set reads as an
                           # SSLv2 record length, and any TLS server then waits for that
                           # many bytes (until the idle timeout), nginx included.
                           ("garbage", bytes(range(1, 128)) * 4)):
            raw = socket.create_connection(("127.0.0.1", s.port), timeout=5)
            t0 = time.monotonic()
            raw.sendall(data)
            try:
                first = raw.recv(4096)
                got = "closed" if first == b"" else "answered %r" % first[:40]
                if first:
                    rest = raw.recv(4096)
                    got += ", then closed" if rest == b"" else ", then more"
            except ConnectionResetError:
                got = "reset"
            except (socket.timeout, TimeoutError):
                got = "hung"
            raw.close()
            res.append("%s: %s in %.0f ms" % (name, got, (time.monotonic() - t0) * 1000))
            check(got in ("closed", "reset") or got.endswith("then closed"),
                  "%s on the TLS port: %s" % (name, got))
        st, _ = request(s.port, "POST", "/mutate", self.sts)
        log("      " + "; ".join(res))
        check(st == 200, "server stopped serving: %d" % st)
        check(s.stop() == 0, "exit code")

    def case_tls_policy(self):
        """Only forward-secret AEAD suites: the priority string as gnutls-cli lists it,
        and every TLS 1.2 suite OpenSSL knows offered alone to an ECDSA and an RSA
        server."""
        src = open(os.path.join(ROOT, "src", "http", "server.c")).read()
        m = re.search(r'#define TLS_PRIORITIES\s*\\?\s*((?:"[^"]*"\s*\\?\s*)+)', src)
        check(m is not None, "TLS_PRIORITIES not found in src/http/server.c")
        prio = "".join(re.findall(r'"([^"]*)"', m.group(1)))
        if shutil.which("gnutls-cli") is None:
            raise Failed("gnutls-cli is missing: run scripts/deps-bench.sh")
        out = subprocess.run(["gnutls-cli", "-l", "--priority", prio], capture_output=True,
                             text=True, timeout=30).stdout
        listed = re.findall(r"^(TLS_\S+)\s+0x", out, re.M)
        check(listed, "gnutls-cli -l listed no suites for %s: %s" % (prio, out[:300]))
        bad = [c for c in listed if not (re.match(r"TLS_(AES|CHACHA20)_", c) or
                                         (c.startswith("TLS_ECDHE_") and
                                          ("_GCM_" in c or "CHACHA20_POLY1305" in c)))]
        log("      priority %s: %d suites listed by gnutls-cli" % (prio, len(listed)))
        check(not bad, "suites without forward secrecy or AEAD allowed: %s" % bad)
        # An RSA pair, as Helm's genSignedCert made them before.
        rsa = os.path.join(self.work, "certs-rsa")
        os.makedirs(rsa, exist_ok=True)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-keyout", os.path.join(rsa, "tls.key"), "-out",
                        os.path.join(rsa, "tls.crt"), "-subj", "/CN=" + SNI],
                       check=True, capture_output=True)
        probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        probe.set_ciphers("ALL:@SECLEVEL=0")
        suites = sorted({c["name"] for c in probe.get_ciphers() if c["protocol"] == "TLSv1.2"})
        for kind, certdir in (("ECDSA", self.certs_a), ("RSA", rsa)):
            s = self.server(certdir=certdir, name="tls-" + kind.lower())
            accepted = []
            for name in suites:
                ctx = client_ctx(version=ssl.TLSVersion.TLSv1_2)
                try:
                    ctx.set_ciphers(name + ":@SECLEVEL=0")
                except ssl.SSLError:
                    continue
                try:
                    c = tls_connect(s.port, ctx, timeout=5)
                    accepted.append(c.cipher()[0])
                    c.close()
                except (ssl.SSLError, ConnectionError):
                    pass
            c = tls_connect(s.port, client_ctx(version=ssl.TLSVersion.TLSv1_3))
            v13 = c.cipher()[0]
            c.close()
            log("      %s certificate: %d TLS 1.2 suites offered one by one, accepted %s; "
                "TLS 1.3 %s" % (kind, len(suites), ", ".join(accepted), v13))
            weak = [a for a in accepted if not a.startswith("ECDHE-") or
                    not ("GCM" in a or "CHACHA20" in a)]
            check(accepted, "no TLS 1.2 suite accepted with the %s certificate" % kind)
            check(not weak, "%s certificate: weak suites accepted: %s" % (kind, weak))
            st, _ = request(s.port, "POST", "/mutate", self.sts)
            check(st == 200, "admission over the policy: %d" % st)
            check(s.stop() == 0, "exit code")

    def case_framing(self):
        """Content-Length with Transfer-Encoding, an unknown or repeated coding, and bad
        Content-Length values: refused with 400 (413 for a length past 2^64) and the
        connection closed, so a request smuggled behind them is never answered."""
        s = self.server(name="framing")
        head = b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        smuggled = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        shapes = [
            ("CL+TE", b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             (400,)),
            ("TE+CL", b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
             (400,)),
            ("TE gzip", b"Transfer-Encoding: gzip\r\n\r\nabc", (400,)),
            ("TE gzip, chunked", b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", (400,)),
            ("TE twice", b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
                         b"0\r\n\r\n", (400,)),
            ("two CL", b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", (400,)),
            ("CL 5x", b"Content-Length: 5x\r\n\r\nabcde", (400,)),
            ("CL -1", b"Content-Length: -1\r\n\r\n{}", (400,)),
            ("CL 2, 2", b"Content-Length: 2, 2\r\n\r\n{}", (400,)),
            ("CL +2", b"Content-Length: +2\r\n\r\n{}", (400,)),
            ("CL past 2^64", b"Content-Length: 99999999999999999999999\r\n\r\n{}", (400, 413)),
        ]
        res = []
        for name, rest, want in shapes:
            t = tls_connect(s.port)
            t.sendall(head + rest + smuggled)
            st, h, _ = read_response(t, timeout=10)
            data = b""
            t.settimeout(10)
            try:
                while True:  # until the server closes; bounded by the socket timeout
                    chunk = t.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                    check(len(data) < 1 << 20, "%s: endless answer" % name)
                closed = True
            except (socket.timeout, TimeoutError):
                closed = False
            except (ConnectionError, ssl.SSLError):
                closed = True
            t.close()
            res.append("%s: %d%s" % (name, st, "" if closed else ", left open"))
            check(st in want, "%s answered %d, want %s" % (name, st, want))
            check(closed, "%s: the connection was kept open" % name)
            check(b"HTTP/1.1 200" not in data, "%s: the request behind it was answered" % name)
        st, _ = request(s.port, "POST", "/mutate", self.sts)
        log("      " + "; ".join(res) + "; then an admission %d" % st)
        check(st == 200, "after the framing errors: %d" % st)
        check(s.stop() == 0, "exit code")

    def kubeconfig(self, api):
        """A kubeconfig for the FakeAPI api (bearer token, its CA)."""
        kc = os.path.join(self.work, "kubeconfig")
        with open(kc, "w") as f:
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: t\n"
                    "clusters:\n- name: t\n  cluster:\n    server: https://127.0.0.1:%d\n"
                    "    certificate-authority: %s\n"
                    "users:\n- name: t\n  user:\n    token: faults-token\n"
                    "contexts:\n- name: t\n  context: {cluster: t, user: t}\n"
                    % (api.port, os.path.join(self.certs_b, "ca.crt")))
        return kc

    def lookup_pod(self, owner, uid):
        """A StatefulSet pod of owner without a world-size annotation: it needs a look-up."""
        d = json.loads(self.sts)
        m = d["request"]["object"]["metadata"]
        del m["annotations"]["distenv.dev/world-size"]
        m["name"] = owner + "-1"
        m["labels"]["apps.kubernetes.io/pod-index"] = "1"
        m["labels"]["statefulset.kubernetes.io/pod-name"] = owner + "-1"
        m["ownerReferences"][0]["name"] = owner
        d["request"]["object"]["spec"]["hostname"] = owner + "-1"
        d["request"]["uid"] = uid
        return json.dumps(d).encode()

    def case_lookup_queue(self):
        """Admissions waiting for look-up workers: the queue is bounded (503 past it) and
        each admission's look-up deadline counts from its arrival, not from when a
        worker picked it up."""
        timeout_ms, queue, n = 2000, 4, 16
        api = FakeAPI(self.certs_b)
        try:
            s = self.server(config="lookups:\n  enabled: true\n  timeoutMs: %d\nserver:\n"
                            "  threads: 1\n  maxQueuedAdmissions: %d\n" % (timeout_ms, queue),
                            extra=("--kubeconfig", self.kubeconfig(api)), name="queue")
            st, _ = request(s.port, "POST", "/mutate", self.lookup_pod("ok-sts", "warm"))
            check(st == 200, "a look-up that works: %d" % st)
            got = {}

            def one(i):
                try:
                    got[i] = request(s.port, "POST", "/mutate",
                                     self.lookup_pod("hang-q%d" % i, "q-%d" % i), timeout=60)
                except Exception as e:  # reported below
                    got[i] = (0, repr(e).encode())
            threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(timeout=90)
            codes = sorted(v[0] for v in got.values())
            denied = [json.loads(b)["response"] for c, b in got.values() if c == 200]
            # The server's own measure of each admission, from its first byte to its answer.
            # Its log line may reach the reader thread after the answer reached the client.
            end = time.monotonic() + 10
            while True:
                with s.lock:
                    micros = [json.loads(l).get("micros", 0) for l in s.lines
                              if '"event":"admission"' in l and '"q-' in l]
                if len(micros) >= len(denied) or time.monotonic() > end:
                    break
                time.sleep(0.05)
            m = s.metrics()
            full = int(re.search(r'^distenv_overload_rejections_total\{reason="queue_full"\} '
                                 r'(\d+)$', m, re.M).group(1))
            log("      %d hanging look-ups at once, 4 workers, queue %d, deadline %d ms: "
                "%d denied in at most %d ms (server clock), %d answered 503 (counted %d); "
                "codes %s" % (n, queue, timeout_ms, len(denied), max(micros or [0]) // 1000,
                              codes.count(503), full, sorted(set(codes))))
            check(set(codes) <= {200, 503}, "answers other than 200/503: %s" % codes)
            # Exact, from both sides: 4 workers hold a look-up each (each hangs for the
            # whole deadline, longer than the 16 take to arrive), `queue` wait, the rest
            # are turned away.
            check(codes.count(503) == n - 4 - queue and full == codes.count(503),
                  "queue of %d behind 4 workers: %d of %d answered 503 (want %d), %d counted"
                  % (queue, codes.count(503), n, n - 4 - queue, full))
            check(all(r["allowed"] is False for r in denied), "a hanging look-up was allowed")
            check(len(micros) == len(denied), "admission log lines %d, denials %d"
                  % (len(micros), len(denied)))
            # Queued behind 4 slow look-ups, a deadline counted from the worker's pick-up
            # would end near 2 x timeout; counted from arrival it ends near 1 x.
            check(max(micros) < timeout_ms * 1000 * 1.6, "an admission took %d ms with a "
                  "%d ms look-up deadline" % (max(micros) // 1000, timeout_ms))
            st, _ = request(s.port, "POST", "/mutate", self.lookup_pod("ok-sts", "after"))
            check(st == 200, "after the backlog: %d" % st)
            check(s.stop() == 0, "exit code")
        finally:
            api.close()

    def case_lookups(self):
        timeout_ms = 1000
        api = FakeAPI(self.certs_b)
        try:
            kc = self.kubeconfig(api)
            s = self.server(config="lookups:\n  enabled: true\n  timeoutMs: %d\n" % timeout_ms,
                            extra=("--kubeconfig", kc), name="look")
            pod = self.lookup_pod

            def admit(owner, uid):
                t0 = time.monotonic()
                st, body = request(s.port, "POST", "/mutate", pod(owner, uid), timeout=30)
                ms = (time.monotonic() - t0) * 1000
                check(st == 200, "%s: HTTP %d" % (owner, st))
                resp = json.loads(body)["response"]
                check(resp["uid"] == uid, "%s: uid not echoed" % owner)
                return resp, ms

            resp, ms = admit("ok-sts", "look-ok")
            check(resp["allowed"] and "patch" in resp, "look-up that works: %r" % resp)
            res = ["works: patched in %.0f ms" % ms]
            for owner in ("hang-sts", "fail500-sts", "forbid-sts", "missing-sts"):
                resp, ms = admit(owner, "look-" + owner)
                msg = resp.get("status", {}).get("message", "")
                res.append("%s: denied in %.0f ms: %s" % (owner, ms, msg))
                check(resp["allowed"] is False, "%s: not denied: %r" % (owner, resp))
                check(msg.startswith("distenv:"), "%s: message %r" % (owner, msg))
                check(owner in msg or "world size" in msg, "%s: message does not say what "
                      "failed: %r" % (owner, msg))
                # The hanging one is ended by its deadline, and says so.
                check(owner != "hang-sts" or "timeout after %dms" % timeout_ms in msg,
                      "%s: the denial does not name the %d ms deadline: %r"
                      % (owner, timeout_ms, msg))
            for line in res:
                log("      " + line)
            # Look-ups hanging on every worker thread at once: the server keeps answering.
            done = []
            threads = []
            for i in range(8):
                th = threading.Thread(target=lambda i=i: done.append(
                    admit("hang-p%d" % i, "hang-%d" % i)))
                th.start()
                threads.append(th)
            n0 = api.requests
            for _ in range(200):  # bounded: the look-ups reach the API server and hang
                if api.requests > n0:
                    break
                time.sleep(0.05)
            st, _ = request(s.port, "GET", "/healthz", timeout=30)
            h_done = len(done)
            st2, _ = request(s.port, "POST", "/mutate", self.sts, timeout=30)
            a_done = len(done)
            for th in threads:
                th.join(timeout=60)
            log("      with 8 hanging look-ups in flight: /healthz %d and an annotated pod %d "
                "answered while %d and %d of them had ended" % (st, st2, h_done, a_done))
            check(st == 200 and st2 == 200, "not served during hanging look-ups")
            # Look-ups run off the network threads: a probe must not queue behind them
            # (it would wait for the look-up deadline, past the kubelet's probe timeout):
            # both are answered before any hanging look-up ends.
            check(h_done == 0 and a_done == 0, "/healthz and an annotated pod answered only "
                  "after %d and %d hanging look-ups ended" % (h_done, a_done))
            check(api.requests >= 5, "the fake API server saw %d requests" % api.requests)
            check(s.proc.poll() is None, "server died")
            check(s.stop() == 0, "exit code")
        finally:
            api.close()


    def case_signals(self):
        """SIGHUP checks the certificate; SIGPIPE (stderr gone) does not kill; a low
        open-file limit is raised or the connection limit clamped below it, without a
        busy loop."""
        import resource
        res = []
        # SIGHUP: a certificate check now, not death (the interval is an hour).
        secret = self.secret_dir(self.certs_a, "2026_02_01_a")
        s = self.server(config="lookups:\n  enabled: false\ntls:\n  checkIntervalSeconds: 3600\n",
                        certdir=secret, name="hup")
        fa, fb = self.fp_a, self.fp_b
        check(peer_fp(s.port) == fa, "certificate A not served at start")
        s.proc.send_signal(signal.SIGHUP)
        check(s.wait_event("certificate_check"), "no certificate_check after SIGHUP")
        check(s.proc.poll() is None, "SIGHUP killed the server (exit %s)" % s.proc.returncode)
        self.secret_dir(self.certs_b, "2026_02_02_b")
        n0 = s.count("certificate_reloaded")  # the first SIGHUP reloaded the same pair
        s.proc.send_signal(signal.SIGHUP)
        check(s.wait_event("certificate_reloaded", after=n0), "SIGHUP did not reload the new pair")
        check(peer_fp(s.port) == fb, "the new certificate is not served after SIGHUP")
        st, _ = request(s.port, "POST", "/mutate", self.sts)
        check(st == 200, "after SIGHUP: %d" % st)
        res.append("SIGHUP: alive, %d checks, new certificate served"
                   % s.count("certificate_check"))
        check(s.stop() == 0, "exit code after SIGHUP")

        # SIGPIPE: stderr is a pipe whose reader has gone; log lines must not kill.
        rfd, wfd = os.pipe()
        s = self.server(name="pipe", stderr=wfd)
        os.close(wfd)
        os.close(rfd)
        for i in range(3):
            st, _ = request(s.port, "POST", "/mutate", self.sts)
            check(st == 200, "with stderr gone: %d" % st)
        s.proc.send_signal(signal.SIGHUP)  # a log line from the watcher thread
        time.sleep(0.5)
        st, _ = request(s.port, "GET", "/nope")
        check(s.proc.poll() is None, "the server died with stderr gone (exit %s)"
              % s.proc.returncode)
        rc = s.stop()
        check(rc == 0, "exit %d with stderr gone" % rc)
        res.append("stderr gone: alive after admissions and SIGHUP, exit 0")

        # A low open-file limit: the soft limit is raised when the hard one allows it ...
        s = self.server(name="nofile-raise",
                        preexec=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 4096)))
        m = s.metrics()
        maxfds = int(re.search(r"^process_max_fds (\d+)$", m, re.M).group(1))
        check(maxfds > 1024, "soft limit not raised: process_max_fds %d" % maxfds)
        check(s.wait_event("open_file_limit_raised"), "no open_file_limit_raised event")
        check(s.stop() == 0, "exit code (raised limit)")
        res.append("soft limit 64, hard 4096: raised to %d" % maxfds)
        # ... else the connection limit is clamped below it, and connections beyond it
        # neither spin the CPU nor stop the server once they go.
        s = self.server(name="nofile-clamp",
                        preexec=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128)))
        s.wait_event("max_connections_clamped")
        ev = s.event_fields.get("max_connections_clamped")
        check(ev is not None, "no max_connections_clamped warning under a 128 open-file limit")
        held = []
        for _ in range(200):
            try:
                held.append(socket.create_connection(("127.0.0.1", s.port), timeout=2))
            except OSError:
                break
        c0 = s.cpu_seconds()
        time.sleep(2)
        cpu = s.cpu_seconds() - c0
        for c in held:
            c.close()
        st = 0
        for _ in range(50):  # bounded: the held connections close on the server's side too
            try:
                st, _ = request(s.port, "POST", "/mutate", self.sts, timeout=5)
                break
            except (OSError, ssl.SSLError, http.client.HTTPException):
                time.sleep(0.2)
        res.append("soft = hard = 128: max_connections clamped to %s; %d connections held, "
                   "CPU %.2f s over 2 s; then an admission %d"
                   % (ev.get("clamped_to"), len(held), cpu, st))
        for line in res:
            log("      " + line)
        check(cpu < 1.0, "%.2f s of CPU over 2 s with the connections held: a busy loop" % cpu)
        check(st == 200, "after the held connections closed: %d" % st)
        check(s.stop() == 0, "exit code (clamped limit)")


class FakeAPI:
    """A TLS API server on loopback whose answer depends on the workload name."""

    def __init__(self, certdir):
        import http.server
        outer = self
        self.requests = 0
        self.stop = threading.Event()

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.requests += 1
                name = self.path.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
                if name.startswith("hang"):
                    outer.stop.wait(30)  # bounded: released when the test ends
                    return
                if name.startswith("fail500"):
                    return self.reply(500, {"kind": "Status", "status": "Failure",
                                            "message": "etcdserver: request timed out",
                                            "code": 500})
                if name.startswith("forbid"):
                    return self.reply(403, {"kind": "Status", "status": "Failure",
                                            "reason": "Forbidden", "code": 403,
                                            "message": "statefulsets.apps \"%s\" is forbidden"
                                            % name})
                if name.startswith("missing"):
                    return self.reply(404, {"kind": "Status", "status": "Failure",
                                            "reason": "NotFound", "code": 404,
                                            "message": "statefulsets.apps \"%s\" not found"
                                            % name})
                return self.reply(200, {"apiVersion": "apps/v1", "kind": "StatefulSet",
                                        "metadata": {"name": name},
                                        "spec": {"replicas": 4, "serviceName": name}})

            def reply(self, code, obj):
                b = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(b)))
                self.end_headers()
                self.wfile.write(b)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(certdir, "tls.crt"), os.path.join(certdir, "tls.key"))
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.th = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.th.start()

    def close(self):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


CASES = ["signals", "tls_policy", "framing", "tls_refused", "lookups", "lookup_queue", "body_budget", "conn_limit", "conn_flood", "slowloris", "stalled_handshakes", "cert_swap", "cert_validity", "sigterm", "drain_keepalive", "drain_deadline",
         "valgrind", "soak"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--soak", type=int, default=None, help="admissions in the soak")
    ap.add_argument("--valgrind-requests", type=int, default=None)
    ap.add_argument("cases", nargs="*", default=CASES)
    a = ap.parse_args()
    if a.soak is None:
        a.soak = 100000 if a.quick else 1000000
    if a.valgrind_requests is None:
        a.valgrind_requests = 300 if a.quick else 2000
    a.binary = os.path.abspath(a.binary)
    passed = failed = 0
    suite = Suite(a)
    try:
        for name in a.cases:
            fn = getattr(suite, "case_" + name, None)
            if fn is None:
                log("FAIL %s: no such case" % name)
                failed += 1
                continue
            t0 = time.monotonic()
            try:
                fn()
                passed += 1
                log("ok   %s (%.1f s)" % (name, time.monotonic() - t0))
            except Exception as e:  # one case's failure must not hide the others
                failed += 1
                log("FAIL %s (%.1f s): %s" % (name, time.monotonic() - t0, e))
                if not isinstance(e, Failed):
                    traceback.print_exc()
                for s in suite.servers:
                    if s.lines:
                        log("      server log (%s): %s" % (os.path.basename(s.cfg), s.tail()))
            for s in list(suite.servers):
                s.kill()
            suite.servers.clear()
    finally:
        suite.cleanup()
    print("faults: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
