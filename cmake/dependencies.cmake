# Third-party dependencies: Debian packages, and DuckDB 1.4.4 from the pinned npm packages.

find_package(Threads REQUIRED)
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

# Path of the npm tree: the console embeds uPlot from it; tests start s3rver and read the SigV4 suite.
set(MILLRACE_NPM_DIR "${MILLRACE_NPM_DIR}" CACHE INTERNAL "")
