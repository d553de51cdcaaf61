#!/usr/bin/env python3
"""What a job's user can send to the agent's port without any credential.

    http_attacks.py chunked HOST PORT MIB      a chunked upload of MIB MiB
    http_attacks.py gzip HOST PORT             a small gzip-encoded upload
    http_attacks.py slowloris HOST PORT N SECONDS
                                               N connections sending their headers
                                               one byte every 2 s
    http_attacks.py health HOST PORT SECONDS   GET /api/v1/health every 0.25 s

The attacks connect from FF_ATTACK_SOURCE (an address of this host, e.g.
127.0.0.2) when set: on the one-host test cluster that stands for the
attacker's own compute node, apart from the head node's probes and the other
nodes' collectors. Each prints one line "key=value ..." for the test to check; the first two the
HTTP status the agent answered (0: closed without one) and how many body bytes
it took before that. Only the standard library: it runs as the test's
unprivileged user.
"""
import gzip
import os
import socket
import sys
import time


def connect(host, port, timeout):
    source = os.environ.get("FF_ATTACK_SOURCE")
    return socket.create_connection((host, port), timeout=timeout,
                                    source_address=(source, 0) if source else None)


def status_of(sock, timeout=10.0):
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionError):
        pass
    line = data.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) >= 2 and line[1].isdigit() else 0


def chunked(host, port, mib):
    sock = connect(host, port, 10)
    sock.sendall(b"POST /api/v1/bundles HTTP/1.1\r\nHost: agent\r\n"
                 b"Content-Type: multipart/form-data; boundary=x\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")
    piece = b"a" * (1 << 20)
    frame = b"%x\r\n" % len(piece) + piece + b"\r\n"
    sent = 0
    try:
        for _ in range(mib):
            sock.sendall(frame)
            sent += len(piece)
    except (ConnectionError, socket.timeout, OSError):
        pass  # the agent closed the connection: what the test wants
    status = status_of(sock)
    sock.close()
    print(f"status={status} sent_mib={sent >> 20}")


def gzip_body(host, port):
    body = gzip.compress(b"--x\r\nContent-Disposition: form-data; name=\"meta\"\r\n\r\n{}\r\n--x--\r\n"
                         + b"\0" * (1 << 20))
    sock = connect(host, port, 10)
    sock.sendall(b"POST /api/v1/bundles HTTP/1.1\r\nHost: agent\r\n"
                 b"Content-Type: multipart/form-data; boundary=x\r\n"
                 b"Content-Encoding: gzip\r\n"
                 + b"Content-Length: %d\r\n\r\n" % len(body))
    try:
        sock.sendall(body)
    except (ConnectionError, OSError):
        pass
    print(f"status={status_of(sock)} bytes={len(body)}")
    sock.close()


def slowloris(host, port, n, seconds):
    request = b"GET /api/v1/health HTTP/1.1\r\nHost: agent\r\nX-Slow: " + b"a" * 200
    socks = []
    for _ in range(n):
        try:
            socks.append(connect(host, port, 5))
        except OSError:
            break
    opened = len(socks)
    closed_by_agent = 0
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end and socks:
        alive = []
        for s in socks:
            try:
                s.send(request[i % len(request):i % len(request) + 1])
                alive.append(s)
            except OSError:
                closed_by_agent += 1
                s.close()
        socks = alive
        i += 1
        time.sleep(2)
    for s in socks:
        s.close()
    print(f"opened={opened} closed_by_agent={closed_by_agent}")


def health(host, port, seconds):
    worst = 0.0
    failures = 0
    probes = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.monotonic()
        ok = False
        try:
            sock = socket.create_connection((host, port), timeout=2)
            sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: agent\r\nConnection: close\r\n\r\n")
            ok = status_of(sock, timeout=2) == 200
            sock.close()
        except OSError:
            ok = False
        took = time.monotonic() - start
        probes += 1
        if not ok:
            failures += 1
        worst = max(worst, took)
        time.sleep(0.25)
    print(f"probes={probes} failures={failures} worst_ms={int(worst * 1000)}")


def main(argv):
    cmd, host, port = argv[1], argv[2], int(argv[3])
    if cmd == "chunked":
        chunked(host, port, int(argv[4]))
    elif cmd == "gzip":
        gzip_body(host, port)
    elif cmd == "slowloris":
        slowloris(host, port, int(argv[4]), float(argv[5]))
    elif cmd == "health":
        health(host, port, float(argv[4]))
    else:
        sys.exit(f"unknown attack {cmd}")


if __name__ == "__main__":
    main(sys.argv)
