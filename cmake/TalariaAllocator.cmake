# talaria's programs (the CLI, the tests, the benchmarks) allocate through mimalloc (Debian's
# libmimalloc-dev) instead of glibc's malloc. A tool call builds and frees many small JSON
# nodes (an argument map of three strings is five allocations and six frees with
# nlohmann/json), and mimalloc's free lists cost about a quarter fewer instructions per call
# there; the benchmarks' W2 (coercion of a fresh argument map) ran about 20 % faster with it.
#
# Only programs link it: libtalaria leaves the allocator to the program that embeds it. The
# program must list it before libc (which the driver puts last) so that its malloc/free/new
# replace glibc's for every library in the process, libtalaria and the modules it loads
# included; --no-as-needed keeps the entry although the program calls nothing of it by name.
# Off under TALARIA_SANITIZE: ASan replaces malloc with its own checking allocator.
option(TALARIA_MIMALLOC "Link talaria's programs against mimalloc" ON)

if(TALARIA_MIMALLOC AND NOT TALARIA_SANITIZE)
  find_package(mimalloc 2.0 REQUIRED CONFIG)
  set(TALARIA_USE_MIMALLOC ON)
else()
  set(TALARIA_USE_MIMALLOC OFF)
endif()

# talaria_link_allocator(<target>): make <target>, a program, allocate through mimalloc.
function(talaria_link_allocator target)
  if(TALARIA_USE_MIMALLOC)
    target_link_libraries(${target} PRIVATE "-Wl,--push-state,--no-as-needed" mimalloc
      "-Wl,--pop-state")
  endif()
endfunction()
