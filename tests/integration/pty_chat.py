"""What the `talaria chat` pseudo-terminal tests share: a terminal driver (Pty), the failing
exit, talaria-fake-llm started on a script and stopped by PID, its request checks, and the
environment and command line of a chat against it.
"""
import contextlib
import json
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time


def fail(msg, transcript=""):
    sys.stderr.write("FAIL: %s\n--- transcript ---\n%s\n" % (msg, transcript[-3000:]))
    sys.exit(1)


class Pty:
    def __init__(self, argv, env, cwd):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.buf = ""

    def read_until(self, needle, timeout=20.0):
        deadline = time.time() + timeout
        while needle not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                fail("did not see %r" % needle, getattr(self, "transcript", "") + "<<BUF>>" + self.buf)
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    data = b""
                if not data:
                    if needle not in self.buf:
                        fail("terminal closed before %r" % needle, self.buf)
                    break
                self.buf += data.decode("utf-8", "replace")
        at = self.buf.index(needle) + len(needle)
        seen, self.buf = self.buf[:at], self.buf[at:]
        self.transcript = getattr(self, "transcript", "") + seen
        return seen

    def send(self, text):
        os.write(self.fd, text.encode())

    def prompt(self, timeout=20.0):
        """Waits for the prompt and for the line editor to take the terminal (canonical mode
        off): keys typed before that are cooked by the terminal, as a person's fastest typing
        never is (a ^D there would be the terminal's end-of-file, not the editor's)."""
        self.read_until("\u203a ", timeout)
        deadline = time.time() + timeout
        while termios.tcgetattr(self.fd)[3] & termios.ICANON:
            if time.time() > deadline:
                fail("the line editor never took the terminal", self.buf)
            time.sleep(0.005)

    def wait(self, timeout=15.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                return os.waitstatus_to_exitcode(status)
            try:  # keep draining so the child never blocks on a full terminal
                r, _, _ = select.select([self.fd], [], [], 0.05)
                if r:
                    self.buf += os.read(self.fd, 4096).decode("utf-8", "replace")
            except OSError:
                time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)
        fail("chat did not exit", getattr(self, "transcript", "") + "<<BUF>>" + self.buf)


@contextlib.contextmanager
def running_fake(fake, script, tmp):
    """talaria-fake-llm serving `script` from `tmp`; yields its port, then ends it (by PID)."""
    proc, port = start_fake(fake, script, tmp)
    try:
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)


def start_fake(fake, script, tmp):
    script_path = os.path.join(tmp, "script.json")
    port_file = os.path.join(tmp, "port")
    with open(script_path, "w") as f:
        json.dump(script, f)
    proc = subprocess.Popen([fake, "--script", script_path, "--port-file", port_file,
                             "--log", os.path.join(tmp, "requests.log")])
    deadline = time.time() + 10
    while not os.path.exists(port_file):
        if time.time() > deadline or proc.poll() is not None:
            fail("talaria-fake-llm did not start")
        time.sleep(0.02)
    with open(port_file) as f:
        return proc, int(f.read().strip())


def problems(port):
    import urllib.request
    with urllib.request.urlopen("http://127.0.0.1:%d/_fake/problems" % port, timeout=5) as r:
        return json.load(r)


def chat_env(tmp, home=None):
    """The environment of a chat whose HOME is `tmp` and $TALARIA_HOME `home` (default
    tmp/.talaria), with no real API key reaching it."""
    env = {k: v for k, v in os.environ.items() if k not in ("TALARIA_HOME", "HOME")}
    env.update({"HOME": tmp, "TALARIA_HOME": home or os.path.join(tmp, ".talaria"),
                "TALARIA_API_KEY": "", "OPENAI_API_KEY": "", "TERM": "xterm"})
    return env


def chat_argv(talaria, port):
    return [talaria, "chat", "--base-url", "http://127.0.0.1:%d/v1" % port, "--model", "fake-model"]
