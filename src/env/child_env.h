// The environment a command's child process gets: the parent's, minus anything whose name looks
// like a secret (the model must not read API keys through `env`), plus settings that keep
// non-interactive tools from waiting on a pager or a prompt.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace talaria::env {

// True when `name` contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, AUTH, PRIVATE or
// COOKIE (case-insensitive).
bool LooksSecret(std::string_view name);

// "NAME=value" entries of `environ_entries` without the secret-looking ones (unless named in
// `passthrough`), with PAGER/GIT_PAGER=cat and GIT_TERMINAL_PROMPT=0 set.
std::vector<std::string> ChildEnvironment(const char* const* environ_entries,
                                          const std::vector<std::string>& passthrough);

}  // namespace talaria::env
