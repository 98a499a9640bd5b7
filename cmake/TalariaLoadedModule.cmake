# A part of a module that libtalaria loads from its own directory on first use (dlopen), so that
# the libraries it brings are not mapped by every start of talaria: the sources of one folder
# (tests excluded), the owning module's header view, $ORIGIN as its only RPATH. SHARED rather
# than MODULE: the unit tests of its internals link it.
#   talaria_loaded_module(<target> OUTPUT_NAME <name> MODULE <module> SOURCE_DIR <dir>
#                         LINK <libraries...>)
function(talaria_loaded_module target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME;MODULE;SOURCE_DIR" "LINK" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${ARG_SOURCE_DIR}/*.cpp)
  list(FILTER srcs EXCLUDE REGEX "_test\\.cpp$")
  add_library(${target} SHARED ${srcs})
  talaria_use_module_view(${target} ${ARG_MODULE})
  target_link_libraries(${target} PRIVATE talaria_lib talaria_deps_private ${ARG_LINK})
  # $ORIGIN in the build tree too: CMake's build RPATH for such targets ends in an empty entry,
  # which the loader reads as "the current directory" (a libc.so.6 planted there would be
  # loaded).
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME}
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR} INSTALL_RPATH "$ORIGIN"
    BUILD_WITH_INSTALL_RPATH ON)
  talaria_set_warnings(${target})
endfunction()
