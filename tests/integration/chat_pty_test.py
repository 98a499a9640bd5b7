#!/usr/bin/env python3
"""`talaria chat` under a pseudo-terminal, as a person uses it, against talaria-fake-llm.

  chat_pty_test.py TALARIA FAKE_LLM

A streamed answer; a tool call's line (emoji, name, preview, status); /usage, /tools, /help;
Ctrl-C at the prompt (a hint), Ctrl-C during a slow answer (the turn stops, the chat goes on),
line history (arrow up recalls the last line); Ctrl-D leaves with exit 0; a second Ctrl-C
leaves with 130. Exit 0 when every check holds, 1 with the failing check otherwise.
"""
import json
import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
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


def main():
    talaria, fake = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="talaria-chat-") as tmp:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        with open(os.path.join(project, "hello.txt"), "w") as f:
            f.write("hello from a file\n")
        script = {"turns": [
            {"text": "Hi! I am the fake model."},
            {"tool_calls": [{"id": "call_1", "name": "read_file",
                             "arguments": json.dumps({"path": "hello.txt"})}]},
            {"text": "The file greets you.",
             "expect": {"last_role": "tool", "last_content_contains": "hello from a file"}},
            {"text": "a very slow answer", "fault": {"kind": "stall", "after_events": 2, "ms": 60000}},
            {"text": "Still here after the interruption."},
        ]}
        proc, port = start_fake(fake, script, tmp)
        try:
            env = {k: v for k, v in os.environ.items() if k not in ("TALARIA_HOME", "HOME")}
            env.update({"HOME": tmp, "TALARIA_HOME": os.path.join(tmp, ".talaria"),
                        "TALARIA_API_KEY": "", "OPENAI_API_KEY": "", "TERM": "xterm"})
            argv = [talaria, "chat", "--base-url", "http://127.0.0.1:%d/v1" % port,
                    "--model", "fake-model"]
            chat = Pty(argv, env, project)
            chat.read_until("/help")
            chat.prompt()
            chat.send("hello there\r")
            chat.read_until("Hi! I am the fake model.")
            chat.prompt()
            chat.send("what does hello.txt say?\r")
            line = chat.read_until("read_file")
            chat.read_until("ok")
            chat.read_until("The file greets you.")
            chat.prompt()
            chat.send("/usage\r")
            chat.read_until("tokens:")
            chat.prompt()
            chat.send("/tools\r")
            chat.read_until("read_file")
            chat.prompt()
            chat.send("/help\r")
            chat.read_until("/compact")
            chat.prompt()
            # History: arrow up brings back the last line typed.
            chat.send("\x1b[A")
            chat.read_until("/help")
            # Ctrl-C at the prompt drops the recalled line, with a hint; the chat stays.
            chat.send("\x03")
            chat.read_until("Ctrl-C again")
            chat.prompt()
            # Ctrl-C during a slow answer: the turn stops, the chat goes on.
            chat.send("take your time\r")
            chat.read_until("a very")
            chat.send("\x03")
            chat.read_until("interrupted")
            chat.prompt()
            chat.send("are you there?\r")
            chat.read_until("Still here after the interruption.")
            chat.prompt()
            chat.send("\x04")  # Ctrl-D
            code = chat.wait()
            if code != 0:
                fail("Ctrl-D exit code %d" % code, chat.buf)
            p = problems(port)
            if p:
                fail("the server found invalid requests: %s" % json.dumps(p))

            # A second Ctrl-C in a row leaves with 130.
            chat = Pty(argv + ["--continue"], env, project)
            chat.prompt()
            chat.send("\x03")
            chat.read_until("Ctrl-C again")
            chat.send("\x03")
            code = chat.wait()
            if code != 130:
                fail("second Ctrl-C exit code %d" % code, chat.buf)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
    print("chat under a pty: ok")


if __name__ == "__main__":
    main()
