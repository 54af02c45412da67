"""A TLS client that sends its handshake one flight at a time, with pauses, shared
by the Python drivers (test/integration, test/faults).

The ssl module's MemoryBIO client makes each flight; the test decides when its
bytes reach the socket: half a ClientHello, a pause, the rest; the server's
flight; a pause; the client's next flight (TLS 1.3: its Finished). A server
whose handshake loop spins while the client pauses shows it in its reads per
handshake; one that waits costs nothing meanwhile.
"""
import socket
import ssl
import time


def client_hello(ctx, server_hostname):
    """Returns (sslobj, incoming, outgoing, hello): a client session and its first flight."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_side=False, server_hostname=server_hostname)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return obj, inc, out, out.read()


def handshake_slowly(sock, ctx, server_hostname, pause=0.3, split_hello=True, deadline=30.0):
    """Runs a client handshake on the connected sock, pausing before each flight
    after the first half of the ClientHello. Returns (sslobj, incoming, outgoing)."""
    end = time.monotonic() + deadline
    obj, inc, out, hello = client_hello(ctx, server_hostname)
    if split_hello:
        sock.sendall(hello[:len(hello) // 2])
        time.sleep(pause)
        sock.sendall(hello[len(hello) // 2:])
    else:
        sock.sendall(hello)
    while time.monotonic() < end:
        try:
            obj.do_handshake()
            done = True
        except ssl.SSLWantReadError:
            done = False
        data = out.read()
        if data:
            time.sleep(pause)
            sock.sendall(data)
        if done:
            return obj, inc, out
        sock.settimeout(max(0.1, end - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection during the handshake")
        inc.write(chunk)
    raise TimeoutError("handshake not done within %.0f s" % deadline)


def request(sock, obj, inc, out, raw, deadline=30.0):
    """Sends the raw HTTP request over the session and returns the response bytes up
    to the end of a Content-Length-framed body."""
    obj.write(raw)
    sock.sendall(out.read())
    buf = b""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            buf += obj.read(65536)
        except ssl.SSLWantReadError:
            sock.settimeout(max(0.1, end - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                break
            inc.write(chunk)
            continue
        head, sep, body = buf.partition(b"\r\n\r\n")
        if sep:
            n = 0
            for line in head.split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    n = int(v)
            if len(body) >= n:
                return buf
    return buf


def closed_within(sock, seconds):
    """Waits up to seconds for the peer to close sock (EOF or reset). Returns the
    seconds it took, or None when it is still open."""
    t0 = time.monotonic()
    sock.settimeout(seconds)
    try:
        while True:
            if not sock.recv(4096):
                return time.monotonic() - t0
    except (ConnectionResetError, BrokenPipeError):
        return time.monotonic() - t0
    except socket.timeout:
        return None
