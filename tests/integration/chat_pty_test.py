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
import sys
import tempfile

from pty_chat import Pty, chat_argv, chat_env, fail, problems, running_fake


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
        with running_fake(fake, script, tmp) as port:
            env = chat_env(tmp)
            argv = chat_argv(talaria, port)
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
    print("chat under a pty: ok")


if __name__ == "__main__":
    main()
