// FindBesideLibrary: the environment's override, else an executable file beside the library.
#include "talaria/base/paths.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "talaria/base/random.h"

namespace talaria {
namespace {

constexpr const char* kVar = "TALARIA_TEST_BESIDE_LIBRARY";

TEST(FindBesideLibrary, TheEnvironmentsProgramWinsAsGiven) {
  ::setenv(kVar, "/opt/elsewhere/helper", 1);
  EXPECT_EQ(FindBesideLibrary(kVar, "talaria-no-such-helper"), "/opt/elsewhere/helper");
  ::setenv(kVar, "", 1);  // empty is unset
  EXPECT_EQ(FindBesideLibrary(kVar, "talaria-no-such-helper"), "");
  ::unsetenv(kVar);
}

// A file beside the library counts only once it is executable (a half-installed or copied
// helper without its mode is not run).
TEST(FindBesideLibrary, OnlyAnExecutableFileBesideTheLibraryIsFound) {
  ::unsetenv(kVar);
  const std::string dir = LibraryDirectory();
  ASSERT_FALSE(dir.empty());
  const std::string name = "talaria-test-helper-" + RandomHex(6);
  const std::filesystem::path path = dir + name;
  EXPECT_EQ(FindBesideLibrary(kVar, name), "") << "absent";
  std::ofstream(path) << "#!/bin/sh\n";
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(FindBesideLibrary(kVar, name), "") << "not executable";
  std::filesystem::permissions(path, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  EXPECT_EQ(FindBesideLibrary(kVar, name), path.string());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace talaria
