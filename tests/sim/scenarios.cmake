# Crowd scenarios C1-C9 of /work/shared/scenarios/README.md (owner: scenarios), one executable
# each, label `scenario` (ctest -L scenario). Helpers: scenarios/scenario_support.hpp.
set(_scenario_dir ${CMAKE_CURRENT_LIST_DIR}/scenarios)
foreach(_scenario
    c1_diagonal_gap
    c2_diagonal_door
    c3_coincident_spawn
    c4_dead_end_queue
    c5_alternating_goal
    c6_unreachable_player
    c7_agent_in_wall
    c8_chokepoint
    c9_cell_border_heading)
  if(EXISTS ${_scenario_dir}/${_scenario}_test.cpp)
    swarmfield_add_test(NAME ${_scenario}_test SOURCES ${_scenario_dir}/${_scenario}_test.cpp
                        LIBS swarmfield::sim LABELS scenario)
    set_tests_properties(${_scenario}_test PROPERTIES TIMEOUT 120)
  endif()
endforeach()
