# talaria — the commands a newcomer needs. CMake + Ninja underneath.
BUILD    ?= build
JOBS     ?= 2
PREFIX   ?= /usr/local
BUILD_TYPE ?= Release

# Debian 12 packages the build and the tests need (`make deps` installs the missing ones).
DEPS := cmake ninja-build g++ pkg-config nlohmann-json3-dev libexpected-dev libyaml-cpp-dev \
        libcli11-dev libre2-dev libpcre2-dev libtomlplusplus-dev libpython3.11-dev libssl-dev nettle-dev libgtest-dev \
        libgmock-dev libcpp-httplib-dev libcurl4-openssl-dev libseccomp-dev json-schema-test-suite bubblewrap openssh-client openssh-server libsqlite3-dev libedit-dev libgumbo-dev zlib1g-dev libpoppler-cpp-dev libidn2-dev libgit2-dev docker.io busybox-static libpng-dev libjpeg62-turbo-dev libgif-dev libwebp-dev chromium libboost-dev libmimalloc-dev \
        python3 python3-readability clang-format clang-tidy universal-ctags
NPM_PEERS := tests/mcp_peers tests/conformance bench/browser_peers

.PHONY: deps configure build test run bench bench-search bench-store-fts bench-session-search bench-browser-peers install sanitize clean

deps:
	@missing=""; for p in $(DEPS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@# The npm test peers: MCP peers, the MCP conformance suite (pinned by committed lockfiles,
	@# installed locally, never globally).
	@for d in $(NPM_PEERS); do \
	  if [ -f $$d/package-lock.json ] && command -v npm >/dev/null 2>&1 && { [ ! -f $$d/node_modules/.package-lock.json ] || \
	     [ $$d/package-lock.json -nt $$d/node_modules/.package-lock.json ]; }; then \
	    echo "make deps: npm ci in $$d"; \
	    npm ci --prefix $$d --ignore-scripts --no-audit --no-fund --loglevel=error || \
	      echo "make deps: npm ci failed in $$d: the tests that need it will be skipped"; \
	  fi; \
	done

# The benchmarks have a build of their own (make bench): make build/test/run never compile them.
configure: deps
	@[ -f $(BUILD)/build.ninja ] || cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DTALARIA_BUILD_BENCH=OFF

build: configure
	ninja -C $(BUILD) -j$(JOBS)

test: build
	ctest --test-dir $(BUILD) -j$(JOBS) --output-on-failure

# The main job (only the CLI is built, not the tests): the tool catalogue, then the tools served
# to MCP clients over Streamable HTTP on loopback, for the current directory, until Ctrl-C.
MCP_ADDR ?= 127.0.0.1:8765
run: configure
	ninja -C $(BUILD) -j$(JOBS) talaria
	./$(BUILD)/talaria tools
	@echo
	@echo "Serving these tools over MCP at http://$(MCP_ADDR)/mcp (root: $(CURDIR)); Ctrl-C stops."
	@echo "Connect a client with {\"mcpServers\": {\"talaria\": {\"url\": \"http://$(MCP_ADDR)/mcp\"}}}"
	@echo "or over stdio with {\"command\": \"$(CURDIR)/$(BUILD)/talaria\", \"args\": [\"mcp\", \"--root\", \"$(CURDIR)\"]}."
	./$(BUILD)/talaria mcp --http $(MCP_ADDR) --root $(CURDIR) || [ $$? -eq 130 ]

# Benchmarks print `METRIC name value unit` lines (medians of 3 suite runs, fresh processes);
# built with symbols so a profiler can read them.
bench: deps
	@[ -f build-bench/build.ninja ] || cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTALARIA_BUILD_TESTS=OFF -DTALARIA_BUILD_BENCH=ON
	ninja -C build-bench -j$(JOBS)
	bench/run.sh --bin build-bench/bench/talaria_bench
	build-bench/bench/talaria_file_bench
	build-bench/bench/talaria_lint_bench
	build-bench/bench/talaria_terminal_bench
	build-bench/bench/talaria_ssh_bench
	build-bench/bench/talaria_docker_bench
	build-bench/bench/talaria_guard_bench
	build-bench/bench/talaria_planner_bench
	build-bench/bench/talaria_batch_bench
	build-bench/bench/talaria_plugin_bench
	build-bench/bench/talaria_mcp_bench
	build-bench/bench/talaria_code_bench
	build-bench/bench/talaria_store_bench append
	build-bench/bench/talaria_stream_bench
	build-bench/bench/talaria_agent_loop_bench
	build-bench/bench/talaria_memory_store_bench
	build-bench/bench/talaria_html_extract_bench
	build-bench/bench/talaria_real_extract_bench
	build-bench/bench/talaria_web_bench
	build-bench/bench/talaria_delegate_bench
	build-bench/bench/talaria_browser_remote_bench

# search_files against ripgrep on a generated 200 MB tree (needs `rg`; takes a few minutes).
bench-search: bench
	build-bench/bench/talaria_search_bench

# FTS5 over 1,000,000 stored messages: p50/p99 search and the index size against the raw text
# (builds a ~1 GB database in $TMPDIR, a few minutes; `--quick` in STORE_FTS_ARGS: 100,000).
STORE_FTS_ARGS ?=
bench-store-fts: bench
	build-bench/bench/talaria_store_bench fts $(STORE_FTS_ARGS)

# session_search discover over 1,000,000 messages in 10,000 sessions (issue 21; a few minutes).
bench-session-search: bench
	build-bench/bench/talaria_store_bench recall $(STORE_FTS_ARGS)

# The browser tools over MCP beside @playwright/mcp (bench/browser_peers, npm ci'd by deps) on one
# page in one sitting, plus `talaria call` through the browser daemon (about a minute).
BROWSER_PEER_ROUNDS ?= 3
bench-browser-peers: build
	node bench/browser_peers/start_bench.mjs $(BUILD)/talaria --rounds $(BROWSER_PEER_ROUNDS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# Unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer, unoptimised (-O0 -g0:
# instrumented code compiles a third faster than at -O1, which keeps CI in its budget; reports
# name functions from the symbol table — rebuild with -g1 locally to get line numbers). The
# library is instrumented; the test code itself is not (cmake/TalariaTestTarget.cmake).
sanitize: deps
	@[ -f build-asan/build.ninja ] || cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g0" -DTALARIA_SANITIZE=ON -DTALARIA_BUILD_BENCH=OFF
	ninja -C build-asan -j$(JOBS) unit_tests
	ctest --test-dir build-asan -L unit -j$(JOBS) --output-on-failure

clean:
	rm -rf $(BUILD) build-bench build-asan
