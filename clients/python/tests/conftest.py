"""The real gateway for the Python client's tests.

Each Gateway is `bin/gateway run` started as a child on free loopback
ports with a state directory of its own; it is ready when its log says
``msg=ready``. Waits are for log lines and values, never sleeps.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the openhal package beside tests/
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BIN = os.environ.get("GATEWAY_BIN") or os.path.join(REPO, "bin", "gateway")
WAIT = 20.0  # seconds: a loaded CI machine

LISTENING = re.compile(r"msg=listening transport=(\w+) url=(\S+) addr=(\S+)(?: .*fingerprint=([0-9a-f]+))?")


def need(module: str):
    """Imports module, or skips the test without it, except in CI (CI
    set), where a missing package fails: .ci/run installs it."""
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("%s is missing in CI: .ci/run installs python3-%s" % (module, module))
        pytest.skip("no %s here (apt-get install python3-%s)" % (module, module))


class Gateway:
    """One `gateway run` child."""

    def __init__(self, state_dir: str, extra: Optional[List[str]] = None, tcp: str = "127.0.0.1:0"):
        if not os.access(BIN, os.X_OK):
            pytest.fail("%s is missing: run `make build` (make test-python does)" % BIN)
        self.dir = state_dir
        self.lines: List[str] = []
        self.cond = threading.Condition()
        args = [BIN, "run", "--state-dir", state_dir, "--http", "127.0.0.1:0", "--tcp", tcp,
                "--log-level", "debug"] + (extra or [])  # debug: "tokens loaded" is the event add_token waits for
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._follow, daemon=True).start()
        self.wait_for(r"msg=ready ")
        self.urls: Dict[str, str] = {}
        self.fingerprint = ""
        for line in self.text().splitlines():
            m = LISTENING.search(line)
            if m:
                self.urls[m.group(1)] = m.group(2)
                if m.group(4):
                    self.fingerprint = m.group(4)
        with open(os.path.join(state_dir, "admin.token")) as f:
            self.admin_token = f.read().strip()

    def _follow(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.lines.append("<exited>\n")
            self.cond.notify_all()

    def text(self, start: int = 0) -> str:
        with self.cond:
            return "".join(self.lines[start:])

    def mark(self) -> int:
        with self.cond:
            return len(self.lines)

    def wait_for(self, pattern: str, start: int = 0, timeout: float = WAIT) -> str:
        """Waits until a log line from line start on matches pattern."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        i = start
        with self.cond:
            while True:
                while i < len(self.lines):
                    if rx.search(self.lines[i]):
                        return self.lines[i]
                    if self.lines[i] == "<exited>\n":
                        raise AssertionError("gateway exited before %r:\n%s" % (pattern, "".join(self.lines)))
                    i += 1
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("no %r in the gateway's log within %ss:\n%s"
                                         % (pattern, timeout, "".join(self.lines)))
                self.cond.wait(left)

    @property
    def tcp(self) -> str:
        return self.urls["tcp"]

    @property
    def tcp_port(self) -> int:
        return int(self.tcp.rsplit(":", 1)[1])

    def add_token(self, name: str, scope: str) -> str:
        """`gateway token add` and waits until the running gateway loaded it."""
        mark = self.mark()
        out = subprocess.run([BIN, "token", "add", "--state-dir", self.dir, "--name", name, "--kind", "agent",
                              "--scope", scope], check=True, capture_output=True, text=True, timeout=WAIT)
        self.wait_for(r'msg="tokens loaded"', mark)
        return out.stdout.strip()

    def revoke_token(self, name: str) -> None:
        """`gateway token revoke` and waits until the running gateway loaded the change."""
        mark = self.mark()
        subprocess.run([BIN, "token", "revoke", name, "--state-dir", self.dir], check=True,
                       capture_output=True, text=True, timeout=WAIT)
        self.wait_for(r'msg="tokens loaded"', mark)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(WAIT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(autouse=True)
def known_gateways(tmp_path, monkeypatch):
    """Each test's clients, and the gateway commands it runs, use a
    known-gateways file of their own, never the user's."""
    path = str(tmp_path / "known_gateways")
    monkeypatch.setenv("GATEWAY_KNOWN_GATEWAYS", path)
    return path


@pytest.fixture(autouse=True)
def no_wait_approval(monkeypatch):
    """The pin factory raises on a pending write unless a test asks it to
    wait: the user's OPENHAL_WAIT_APPROVAL does not reach the tests."""
    monkeypatch.delenv("OPENHAL_WAIT_APPROVAL", raising=False)


@pytest.fixture
def state_dir():
    d = tempfile.mkdtemp(prefix="openhal-py-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def gateway(state_dir):
    g = Gateway(state_dir)
    yield g
    g.stop()


@pytest.fixture
def client(gateway):
    import openhal
    c = openhal.connect(gateway.tcp, gateway.admin_token, timeout=WAIT)
    yield c
    c.close()


class Proxy:
    """A TCP proxy on loopback whose connections the test can cut: a lost
    network between a client and the same run of the gateway."""

    def __init__(self, port: int):
        self.target = port
        self.ln = socket.create_server(("127.0.0.1", 0))
        self.url = "tcp://127.0.0.1:%d" % self.ln.getsockname()[1]
        self.socks: List[socket.socket] = []
        self.lock = threading.Lock()
        self.accepted = threading.Semaphore(0)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                a, _ = self.ln.accept()
            except OSError:
                return
            b = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.socks += [a, b]
            for src, dst in ((a, b), (b, a)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()
            self.accepted.release()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        with self.lock:
            socks, self.socks = self.socks, []
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def pause(self) -> None:
        """Cuts every connection and refuses new ones until resume()."""
        self.port = self.ln.getsockname()[1]
        self.ln.shutdown(socket.SHUT_RDWR)  # wakes the accept, so the port is free at once
        self.ln.close()
        self.cut()

    def resume(self) -> None:
        self.ln = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        try:
            self.ln.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.ln.close()
        self.cut()
