// Where talaria keeps its state: $TALARIA_HOME, default ~/.talaria (config.yaml, spill/,
// audit.jsonl, plugins/, sessions.db, memories/).
// Thread-safety: reads the environment on every call; no cached state.
#pragma once

#include <string>
#include <string_view>

namespace talaria {

// $TALARIA_HOME when set and non-empty, else $HOME/.talaria (else ./.talaria).
std::string TalariaHome();

// The user's home directory as the password database has it (what `~` means to the guard's
// deny rules even when $HOME is changed), else $HOME, else "".
std::string UserHome();

// What `~` and $HOME mean to the commands talaria runs (they inherit its environment): $HOME
// when it is set and absolute, else UserHome(). The guard expands `~` with this one: bash does.
std::string ShellHome();

// The directory of the shared object holding talaria's code (libtalaria.so; the executable when
// linked statically), with a trailing '/': where its helper modules and programs are installed.
// Empty when the loader cannot tell.
std::string LibraryDirectory();

// A helper program: $`env_var` when set and non-empty (taken as given: tests and packagers
// point it elsewhere), else `name` in LibraryDirectory() when that file is executable. Empty
// when neither. Used for talaria-pdf-text and talaria-plugin-trial.
std::string FindBesideLibrary(const char* env_var, std::string_view name);

// dlopen (RTLD_NOW | RTLD_LOCAL, so its symbols stay out of the global scope plugins bind
// against) of the helper module `file` installed beside libtalaria; never by bare name, which
// would let the loader's search path pick up some other build. On failure, why, naming `what`
// ("the Python lint module is not available (...): ..."), in `error`.
void* OpenSiblingModule(std::string_view file, std::string_view what, std::string& error);

}  // namespace talaria
