// Keeping talaria's own secrets (API keys, tokens: variables whose names look secret, see
// child_env.h) from the commands it runs. Commands never get those variables, but a child could
// still read them from its parent: `/proc/$PPID/environ` shows the environment talaria was
// started with, and /proc/$PPID/mem the rest.
//
// HideSecretsFromChildren, called once at start-up before any thread or child exists:
//   - moves every secret-named variable's value to the heap (getenv and setenv keep working) and
//     overwrites the original bytes in the start-up environment block with NULs, so
//     /proc/<talaria>/environ no longer holds them, for any reader;
//   - makes the process non-dumpable (PR_SET_DUMPABLE 0), so /proc/<talaria>/mem and environ
//     are closed to other processes of the same user that lack CAP_SYS_PTRACE. A root-run
//     talaria's children keep that capability: there only the sandbox's PID namespace (the
//     default terminal backend) hides talaria.
// Thread-safety: not thread-safe (it edits the environment); call it first thing in main().
#pragma once

namespace talaria::env {

// Returns how many variables' values were moved out of the start-up block.
int HideSecretsFromChildren();

}  // namespace talaria::env
