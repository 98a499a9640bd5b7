// Bubblewrap in the tests: whether it can make its namespaces on this machine (many refuse
// unprivileged user namespaces: Ubuntu through AppArmor, unprivileged containers, chroots), so
// tests of what only its sandbox gives skip with the reason there; and a stand-in program that
// fails exactly as bwrap does on such a kernel, so the fallbacks are tested on every machine.
// Thread-safety: BwrapUnusableReason is thread-safe (computed once).
#pragma once

#include <string>

namespace talaria::test_support {

// Empty when `bwrap` (from PATH) can sandbox here; else why not (bwrap's own message).
const std::string& BwrapUnusableReason();

// Writes `dir`/bwrap, an executable that prints the kernel-refusal message bwrap prints and
// exits 1, and returns its path.
std::string WriteRefusingBwrap(const std::string& dir);

}  // namespace talaria::test_support

// Skips the current test (from its body or SetUp) where bubblewrap cannot sandbox.
#define TALARIA_SKIP_WITHOUT_BWRAP()                                                             \
  do {                                                                                           \
    if (const std::string& why = ::talaria::test_support::BwrapUnusableReason(); !why.empty()) { \
      GTEST_SKIP() << "needs a bubblewrap sandbox, which cannot start here: " << why;            \
    }                                                                                            \
  } while (false)
