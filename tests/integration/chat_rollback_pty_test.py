#!/usr/bin/env python3
"""`/rollback` in `talaria chat` under a pseudo-terminal, against talaria-fake-llm.

  chat_rollback_pty_test.py TALARIA FAKE_LLM

With checkpoints on, a turn whose model overwrites a file leaves one snapshot; `/rollback`
lists it (reason, +/- counts), `/rollback diff 1` shows the change, `/rollback 1` puts the
file back on disk and names the pre-rollback snapshot, which `/rollback 1 FILE` then brings
forward again. Bad input (`/rollback 99`, `/rollback diff`, a hostile hash) is a message,
never a crash; the chat leaves with exit 0. Exit 0 when every check holds, 1 otherwise.
"""
import json
import os
import sys
import tempfile

from pty_chat import Pty, chat_argv, chat_env, fail, problems, running_fake

ORIGINAL = "the original notes\nsecond line\n"
REWRITTEN = "rewritten by the model\n"


def read(path):
    with open(path) as f:
        return f.read()


def main():
    talaria, fake = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="talaria-rollback-") as tmp:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        notes = os.path.join(project, "notes.txt")
        with open(notes, "w") as f:
            f.write(ORIGINAL)
        home = os.path.join(tmp, ".talaria")
        os.makedirs(home)
        with open(os.path.join(home, "config.yaml"), "w") as f:
            f.write("terminal:\n  backend: local\ncheckpoints:\n  enabled: true\n")
        args = json.dumps({"path": "notes.txt", "content": REWRITTEN})
        script = {"turns": [
            {"tool_calls": [{"id": "call_1", "name": "write_file", "arguments": args}]},
            {"text": "I rewrote the notes.", "expect": {"last_role": "tool"}},
        ]}
        with running_fake(fake, script, tmp) as port:
            env = chat_env(tmp, home)
            argv = chat_argv(talaria, port)
            chat = Pty(argv, env, project)
            chat.read_until("/help")
            chat.prompt()
            # Nothing yet: the store says so rather than failing.
            chat.send("/rollback\r")
            chat.read_until("no checkpoints of")
            chat.prompt()
            chat.send("please rewrite the notes\r")
            chat.read_until("I rewrote the notes.")
            chat.prompt()
            if read(notes) != REWRITTEN:
                fail("the model's write did not land", chat.transcript)

            chat.send("/rollback\r")
            chat.read_until("checkpoints of")
            listing = chat.read_until("/rollback N [FILE] restores one")
            # The snapshot holds the two lines of the file as it was before the write.
            if "before write_file" not in listing or "+2 -0" not in listing:
                fail("the list lacks the snapshot's reason or line counts", listing)
            chat.prompt()

            chat.send("/rollback diff 1\r")
            diff = chat.read_until("+" + REWRITTEN.strip())
            if "-the original notes" not in diff:
                fail("the diff does not show the removed lines", diff)
            chat.prompt()

            # Bad input: a message each, and the chat stays.
            chat.send("/rollback 99\r")
            chat.read_until("no checkpoint 99 (there are 1)")
            chat.prompt()
            chat.send("/rollback diff\r")
            chat.read_until("/rollback diff N|HASH")
            chat.prompt()
            chat.send("/rollback ../../etc\r")
            chat.read_until("\u00b7 ")
            chat.prompt()
            if read(notes) != REWRITTEN:
                fail("bad input changed the project", chat.transcript)

            chat.send("/rollback 1\r")
            restored = chat.read_until("(restore it to undo)")
            if "restored " not in restored or "1 file(s)" not in restored:
                fail("the restore did not report one file", restored)
            chat.prompt()
            if read(notes) != ORIGINAL:
                fail("/rollback 1 did not put the file back: %r" % read(notes), chat.transcript)

            # The pre-rollback snapshot is now the newest: one file of it undoes the undo.
            chat.send("/rollback\r")
            listing = chat.read_until("/rollback N [FILE] restores one")
            if "pre-rollback" not in listing:
                fail("no pre-rollback snapshot listed", listing)
            chat.prompt()
            chat.send("/rollback 1 notes.txt\r")
            chat.read_until("restored notes.txt")
            chat.prompt()
            if read(notes) != REWRITTEN:
                fail("restoring one file of the pre-rollback snapshot failed", chat.transcript)

            chat.send("/exit\r")
            code = chat.wait()
            if code != 0:
                fail("/exit code %d" % code, chat.buf)
            p = problems(port)
            if p:
                fail("the server found invalid requests: %s" % json.dumps(p))
    print("/rollback under a pty: ok")


if __name__ == "__main__":
    main()
