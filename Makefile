# Millrace: every developer entry point. Each target installs what it needs first.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
# Extra ctest arguments, e.g. CTEST_ARGS="-L unit" for the fast tests only (README: Developing).
CTEST_ARGS ?=

.PHONY: all deps deps-server configure configure-server build build-server run test chaos \
  bench bench-quick format clean

all: build

# Everything: the server's build and the tests' peers (database servers, drivers, a browser).
deps:
	@scripts/install_deps.sh all

# Only what the server needs to build and run.
deps-server:
	@scripts/install_deps.sh server

CMAKE_CONFIGURE = cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DCMAKE_EXPORT_COMPILE_COMMANDS=ON

# With the tests: configured anew when the build directory was configured without them.
configure: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ] || \
	    grep -q '^MILLRACE_BUILD_TESTS:BOOL=OFF' $(BUILD_DIR)/CMakeCache.txt; then \
	  $(CMAKE_CONFIGURE) -DMILLRACE_BUILD_TESTS=ON; \
	fi

# Without the tests when the build directory is new; one that has them keeps them.
configure-server: deps-server
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  $(CMAKE_CONFIGURE) -DMILLRACE_BUILD_TESTS=OFF; \
	fi

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The `millrace` binary alone.
build-server: configure-server
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target millrace

# Starts the server on embedded defaults with its data under ./var; local() and local-file jobs
# read under /tmp/in (the quickstart's directory). Installs and builds only what the server
# needs: no test peer, no test.
run: build-server
	@mkdir -p var
	@mkdir -p /tmp/in
	$(BUILD_DIR)/millrace serve --data-dir var --local-root /tmp/in

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The long crash and snapshot runs that `make test` runs small: change data capture at 100k rows
# a table, the S3 chaos test with 2,000 files, the cluster chaos test with 20 jobs and 2,000 files
# (and the other cluster tests), and the hostile-file fuzz with 5,000 mutated files
# of each kind (a new seed each run, printed; MILLRACE_FUZZ_SEED=N runs one again).
chaos: build
	@cd $(BUILD_DIR) && MILLRACE_CDC_ROWS=100000 MILLRACE_CDC_CRASH_ROWS=100000 \
	  MILLRACE_CDC_CRASH_KILLS=16 MILLRACE_CHAOS_FILES=2000 \
	  MILLRACE_CLUSTER_CHAOS_JOBS=20 MILLRACE_CLUSTER_CHAOS_FILES=2000 \
	  MILLRACE_FUZZ_FILES=5000 MILLRACE_FUZZ_SEED=$${MILLRACE_FUZZ_SEED:-$$(date +%s)} \
	  ctest --output-on-failure --timeout 3600 \
	    -R 'pg_cdc|mysql_cdc|JobE2ETest.Chaos|HostileFuzzTest|cluster_e2e' $(CTEST_ARGS)

bench: build
	@BUILD_DIR=$(BUILD_DIR) JOBS=$(JOBS) bench/run.sh full

bench-quick: build
	@BUILD_DIR=$(BUILD_DIR) JOBS=$(JOBS) bench/run.sh quick

format:
	@find src tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
