# Settings every GoogleTest executable shares (module unit tests, integration tests).
# - No precompiled header: measured on this code, a test file compiles no faster with the
#   json+gtest PCH (its cost is gtest's macro expansion and code generation, not parsing), and
#   each test target paid ~18 s to build its own PCH.
# - -O1 in optimised builds: the library under test keeps -O2; the test code itself does not need
#   it, and -O1 compiles test files 10-35 % faster.
function(talaria_configure_test_target target)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${target} PRIVATE talaria_lib talaria_deps_private PkgConfig::HTTPLIB
    GTest::gtest GTest::gmock GTest::gtest_main)
  add_dependencies(${target} talaria_http)  # tests reach HTTP MCP through the loaded module
  target_compile_definitions(${target} PRIVATE
    TALARIA_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TALARIA_BINARY_DIR="${PROJECT_BINARY_DIR}"
    TALARIA_CLI_PATH="$<TARGET_FILE:talaria>")
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release,RelWithDebInfo>:-O1>)
  talaria_set_warnings(${target})
endfunction()
