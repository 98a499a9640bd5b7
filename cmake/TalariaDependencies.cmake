# Every dependency is a Debian 12 package; `make deps` installs the missing ones.
find_package(nlohmann_json 3.11 REQUIRED)
find_package(tl-expected REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(NETTLE REQUIRED IMPORTED_TARGET nettle)  # SHA-256
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)  # search_files content search
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)  # execute_code's syscall filter
find_package(tomlplusplus 3 REQUIRED)  # Debian builds it as a shared library (TOML_HEADER_ONLY=0)
# The embedded interpreter for the Python lint, linked only by the lazily loaded
# libtalaria_python_lint.so; pkg-config, not FindPython3 (which finds another interpreter on
# these machines).
pkg_check_modules(PYTHON_EMBED REQUIRED IMPORTED_TARGET python-3.11-embed)
# The MCP Streamable HTTP transport and client (and the tests' HTTP client). Debian ships it as
# a compiled library; only libtalaria_http.so (src/mcp_http/) and tests link it.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# Outbound HTTP(S) (the model client); only the lazily loaded libtalaria_net.so links it.
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
# The browser's WebSocket transport (wss): only the lazily loaded libtalaria_browser_ws.so links
# it; Boost.Beast (libboost-dev) is header-only.
pkg_check_modules(OPENSSL REQUIRED IMPORTED_TARGET openssl)
# The session store (src/store/): Debian's SQLite, with FTS5 and its trigram tokenizer (3.34+).
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3>=3.34)
# HTML5 parsing for main-content extraction (src/html/): Debian's libgumbo.
pkg_check_modules(GUMBO REQUIRED IMPORTED_TARGET gumbo)
# Internationalized host names for the network guard (src/web/idn.cpp).
pkg_check_modules(IDN2 REQUIRED IMPORTED_TARGET libidn2)
# PDF text for web_extract; only the talaria-pdf-text program (src/web/pdf/) links it.
pkg_check_modules(POPPLER_CPP REQUIRED IMPORTED_TARGET poppler-cpp)
# The checkpoints' shadow git stores: Debian's libgit2, no git process; only the lazily loaded
# libtalaria_checkpoints.so (src/checkpoints/git/) links it.
pkg_check_modules(LIBGIT2 REQUIRED IMPORTED_TARGET libgit2)
# The media tools' image decoding and scaling (src/media/): Debian's libpng and libjpeg-turbo.
pkg_check_modules(PNG REQUIRED IMPORTED_TARGET libpng16)
pkg_check_modules(JPEG REQUIRED IMPORTED_TARGET libjpeg)
# ... and GIF (giflib) and WebP (libwebp; libwebpdemux for an animation's first frame), so
# oversized ones are scaled rather than refused.
pkg_check_modules(GIF REQUIRED IMPORTED_TARGET libgif)
pkg_check_modules(WEBP REQUIRED IMPORTED_TARGET libwebp libwebpdemux)
# Only the media tests link the animation encoder (to make an animated WebP to decode).
pkg_check_modules(WEBPMUX REQUIRED IMPORTED_TARGET libwebpmux)
# `talaria chat`'s line editing and history (BSD-licensed; linked by the program only).
pkg_check_modules(LIBEDIT REQUIRED IMPORTED_TARGET libedit)

add_library(talaria_deps_public INTERFACE)
target_link_libraries(talaria_deps_public INTERFACE tl::expected nlohmann_json::nlohmann_json)

add_library(talaria_deps_private INTERFACE)
target_link_libraries(talaria_deps_private INTERFACE yaml-cpp PkgConfig::RE2 PkgConfig::PCRE2 Threads::Threads
  tomlplusplus::tomlplusplus PkgConfig::NETTLE PkgConfig::SECCOMP PkgConfig::SQLITE3
  PkgConfig::GUMBO PkgConfig::IDN2)
