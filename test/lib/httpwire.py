"""HTTP/1.1 on a raw socket, shared by the Python drivers (test/integration, test/faults)."""


def read_response(sock, error=Exception, timeout=None, partial_ok=False):
    """Reads one HTTP/1.1 response framed by Content-Length from sock.

    Returns (status, headers, body) with header names lower-cased. A close
    before the head ends raises error; a close mid-body raises error too, or,
    with partial_ok, returns the body read so far. timeout, when given, is set
    on the socket first.
    """
    if timeout is not None:
        sock.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise error("connection closed before a response head (got %r)" % buf[:200])
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = sock.recv(65536)
        if not chunk:
            if partial_ok:
                break
            raise error("connection closed mid-body (%d of %d bytes)" % (len(rest), n))
        rest += chunk
    return status, headers, rest[:n]
