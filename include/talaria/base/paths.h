// Where talaria keeps its state: $TALARIA_HOME, default ~/.talaria (config.yaml, spill/,
// audit.jsonl, plugins/, sessions.db, memories/).
// Thread-safety: reads the environment on every call; no cached state.
#pragma once

#include <string>

namespace talaria {

// $TALARIA_HOME when set and non-empty, else $HOME/.talaria (else ./.talaria).
std::string TalariaHome();

// The user's home directory as the password database has it (what `~` means to the guard's
// deny rules even when $HOME is changed), else $HOME, else "".
std::string UserHome();

// The directory of the shared object holding talaria's code (libtalaria.so; the executable when
// linked statically), with a trailing '/': where its helper modules and programs are installed.
// Empty when the loader cannot tell.
std::string LibraryDirectory();

}  // namespace talaria
