# Every dependency is a Debian 12 package; `make deps` installs the missing ones.
find_package(nlohmann_json 3.11 REQUIRED)
find_package(tl-expected REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)

add_library(talaria_deps_public INTERFACE)
target_link_libraries(talaria_deps_public INTERFACE tl::expected nlohmann_json::nlohmann_json)

add_library(talaria_deps_private INTERFACE)
target_link_libraries(talaria_deps_private INTERFACE yaml-cpp PkgConfig::RE2 Threads::Threads)
