# Third-party dependencies: Debian packages, and DuckDB 1.4.4 from the pinned npm packages.

find_package(Threads REQUIRED)
find_package(GTest REQUIRED)
# Every JSON the project parses (offsets, jsonpaths, test fixtures): Debian nlohmann-json3-dev.
find_package(nlohmann_json 3.11 REQUIRED)

# Compression codecs Millrace decodes itself (DuckDB reads gzip and zstd natively).
find_package(ZLIB REQUIRED)
find_library(BZ2_LIBRARY bz2 REQUIRED)
find_library(LZ4_LIBRARY lz4 REQUIRED)
find_library(ZSTD_LIBRARY zstd REQUIRED)

# DuckDB: by default the header of npm `duckdb@1.4.4` and libduckdb.so of
# `@duckdb/node-bindings-linux-<arch>@1.4.4-r.4`, both under third_party/npm/node_modules.
# -DMILLRACE_SYSTEM_DUCKDB=ON uses a system libduckdb (same version) found by find_library.
option(MILLRACE_SYSTEM_DUCKDB "Use a system-installed libduckdb instead of the npm one" OFF)
set(MILLRACE_NPM_DIR "${CMAKE_SOURCE_DIR}/third_party/npm/node_modules")
if(MILLRACE_SYSTEM_DUCKDB)
  find_path(DUCKDB_INCLUDE_DIR duckdb.h REQUIRED)
  find_library(DUCKDB_LIBRARY duckdb REQUIRED)
else()
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    set(_duckdb_arch arm64)
  else()
    set(_duckdb_arch x64)
  endif()
  set(DUCKDB_INCLUDE_DIR "${MILLRACE_NPM_DIR}/duckdb/src/duckdb/src/include")
  set(DUCKDB_LIBRARY "${MILLRACE_NPM_DIR}/@duckdb/node-bindings-linux-${_duckdb_arch}/libduckdb.so")
  if(NOT EXISTS "${DUCKDB_INCLUDE_DIR}/duckdb.h" OR NOT EXISTS "${DUCKDB_LIBRARY}")
    message(FATAL_ERROR "DuckDB not found under ${MILLRACE_NPM_DIR}: run scripts/install_deps.sh")
  endif()
endif()
message(STATUS "DuckDB: ${DUCKDB_LIBRARY}")

add_library(duckdb SHARED IMPORTED GLOBAL)
set_target_properties(duckdb PROPERTIES
  IMPORTED_LOCATION "${DUCKDB_LIBRARY}"
  IMPORTED_NO_SONAME ON
  INTERFACE_INCLUDE_DIRECTORIES "${DUCKDB_INCLUDE_DIR}")
# The binary finds libduckdb.so through its rpath, never LD_LIBRARY_PATH.
get_filename_component(DUCKDB_LIBRARY_DIR "${DUCKDB_LIBRARY}" DIRECTORY)
set(CMAKE_BUILD_RPATH "${DUCKDB_LIBRARY_DIR}")
set(CMAKE_INSTALL_RPATH "${DUCKDB_LIBRARY_DIR}")

# Path of the npm tree, for tests that start s3rver or read the SigV4 suite.
set(MILLRACE_NPM_DIR "${MILLRACE_NPM_DIR}" CACHE INTERNAL "")

# A test binary: GoogleTest main, registered with ctest test by test. LABELS is required and
# names what the binary needs, so `ctest -L unit` picks the fast set:
#   unit   fast and hermetic: no child server process, no s3rver, no fork/kill
#   e2e    through the real `millrace` binary, s3rver, or the mariadb client / Connector C
#   crash  kill -9 crash tests
include(GoogleTest)
set(MILLRACE_TEST_LABELS unit e2e crash)
function(millrace_test name)
  # ONE_PROCESS: the binary runs as one test (its suites share a heavy peer, started once)
  # instead of one process per test case.
  cmake_parse_arguments(ARG "ONE_PROCESS" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    message(FATAL_ERROR "millrace_test(${name}): LABELS is required (${MILLRACE_TEST_LABELS})")
  endif()
  foreach(label IN LISTS ARG_LABELS)
    if(NOT label IN_LIST MILLRACE_TEST_LABELS)
      message(FATAL_ERROR "millrace_test(${name}): unknown label ${label}")
    endif()
  endforeach()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    MILLRACE_NPM_DIR="${MILLRACE_NPM_DIR}"
    MILLRACE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    MILLRACE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(ARG_ONE_PROCESS)
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
      PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
  endif()
endfunction()
