# Settings every GoogleTest executable shares (module unit tests, integration tests).
# - No precompiled header: measured on this code, a test file compiles no faster with the
#   json+gtest PCH (its cost is gtest's macro expansion and code generation, not parsing), and
#   each test target paid ~18 s to build its own PCH.
# - -O1 in optimised builds: the library under test keeps -O2; the test code itself does not need
#   it, and -O1 compiles test files 10-35 % faster.
function(talaria_configure_test_target target)
  # tests/support (test helpers), reached as "support/...".
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${target} PRIVATE talaria_lib talaria_deps_private PkgConfig::HTTPLIB
    GTest::gtest GTest::gmock GTest::gtest_main)
  add_dependencies(${target} talaria_http)  # tests reach HTTP MCP through the loaded module
  talaria_link_allocator(${target})  # the allocator the talaria program runs with
  target_compile_definitions(${target} PRIVATE
    TALARIA_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TALARIA_BINARY_DIR="${PROJECT_BINARY_DIR}"
    TALARIA_CLI_PATH="$<TARGET_FILE:talaria>")
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release,RelWithDebInfo>:-O1>)
  # Under TALARIA_SANITIZE the library (and everything else talaria ships) is instrumented and
  # the test programs link the sanitizer runtimes, but the test code itself is not instrumented:
  # it halves the sanitizer build's test compile time (670 s of CPU in CI), and checking the
  # code under test is the point.
  if(TALARIA_SANITIZE)
    target_compile_options(${target} PRIVATE -fno-sanitize=all)
  endif()
  # Unity batches: a test file's cost is mostly gtest's and json's templates, instantiated once
  # per translation unit; eight test files per unit compiled 2.4x faster than one each (six
  # agent tests: 27.5 s apart, 11.3 s together), which keeps CI's two builds in budget.
  if(TALARIA_UNITY_TESTS)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
  talaria_set_warnings(${target})
endfunction()
