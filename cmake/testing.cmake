# What only the tests and benchmarks need (MILLRACE_BUILD_TESTS): GoogleTest from Debian and the
# millrace_test() function every tests/ folder uses.

find_package(GTest REQUIRED)

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
  # Paths to the tree come from millrace_testing (testing/test_paths.h), never from a definition
  # on the test's command line: that would key every test's objects in ccache to one clone.
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} millrace_testing GTest::gtest GTest::gtest_main)
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
