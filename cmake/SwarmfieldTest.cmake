# swarmfield_add_test(NAME name SOURCES a.cpp ... LIBS lib ... [LABELS l ...])
# One doctest executable per call, registered with ctest under its name.
# Tests get SWARMFIELD_MAPS_DIR (../shared/data/maps) as a compile definition and tests/support
# (shared test helpers) on their include path. Every listed source must exist: a test file that
# goes missing fails the configure step instead of silently dropping its test.
function(swarmfield_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES} ${CMAKE_SOURCE_DIR}/tests/doctest_main.cpp)
  target_link_libraries(${T_NAME} PRIVATE doctest::doctest ${T_LIBS})
  target_include_directories(${T_NAME} PRIVATE ${CMAKE_SOURCE_DIR}/tests/support)
  target_compile_definitions(${T_NAME} PRIVATE
    SWARMFIELD_MAPS_DIR="${SWARMFIELD_SHARED_DIR}/data/maps"
    SWARMFIELD_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
  swarmfield_target_defaults(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
