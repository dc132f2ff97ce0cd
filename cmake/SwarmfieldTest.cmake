# swarmfield_add_test(NAME name SOURCES a.cpp ... LIBS lib ... [LABELS l ...] [ARGS arg ...])
# One doctest executable per call, registered with ctest under its name (run with ARGS, e.g. a
# doctest filter). Tests get SWARMFIELD_MAPS_DIR (../shared/data/maps) as a compile definition
# and link swarmfield_test_support (tests/support: shared helpers, the skip rule, and that folder
# on the include path). Exit code 77 is reported as skipped (see tests/support/skip.hpp). Every
# listed source must exist: a test file that goes missing fails the configure step instead of
# silently dropping its test.
function(swarmfield_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES} ${CMAKE_SOURCE_DIR}/tests/doctest_main.cpp)
  target_link_libraries(${T_NAME} PRIVATE doctest::doctest swarmfield_test_support ${T_LIBS})
  target_compile_definitions(${T_NAME} PRIVATE
    SWARMFIELD_MAPS_DIR="${SWARMFIELD_SHARED_DIR}/data/maps"
    SWARMFIELD_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
  swarmfield_target_defaults(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
  set_tests_properties(${T_NAME} PROPERTIES SKIP_RETURN_CODE 77)
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
