# Map, fields and sampling tests (owner: sim-core). Included from tests/sim/CMakeLists.txt.
set(_fields_dir ${CMAKE_CURRENT_LIST_DIR})

swarmfield_add_test(NAME grid_map_test SOURCES ${_fields_dir}/grid_map_test.cpp LIBS swarmfield::sim)
swarmfield_add_test(NAME map_parse_test SOURCES ${_fields_dir}/map_parse_test.cpp LIBS swarmfield::sim swarmfield::io)
swarmfield_add_test(NAME city_generator_test SOURCES ${_fields_dir}/city_generator_test.cpp LIBS swarmfield::sim)
swarmfield_add_test(NAME integration_field_test SOURCES ${_fields_dir}/integration_field_test.cpp LIBS swarmfield::sim swarmfield::io)
swarmfield_add_test(NAME flow_field_test SOURCES ${_fields_dir}/flow_field_test.cpp LIBS swarmfield::sim)
swarmfield_add_test(NAME sample_flow_test SOURCES ${_fields_dir}/sample_flow_test.cpp LIBS swarmfield::sim)
swarmfield_add_test(NAME navigation_fields_test SOURCES ${_fields_dir}/navigation_fields_test.cpp LIBS swarmfield::sim swarmfield::io)
# Replaces the global operator new to count allocations: kept in its own executable.
swarmfield_add_test(NAME fields_alloc_test SOURCES ${_fields_dir}/fields_alloc_test.cpp LIBS swarmfield::sim swarmfield::io)
# swarmfield::io units (map files, .scen, PNG).
swarmfield_add_test(NAME io_files_test SOURCES ${_fields_dir}/io_files_test.cpp LIBS swarmfield::io PNG::PNG)

# MovingAI scenarios: a quick subset by default; every line under the scen-full label
# (ctest -L scen-full; exclude with ctest -LE scen-full).
swarmfield_add_test(NAME scen_test SOURCES ${_fields_dir}/scen_test.cpp LIBS swarmfield::io LABELS scen)
swarmfield_add_test(NAME scen_full_test SOURCES ${_fields_dir}/scen_test.cpp LIBS swarmfield::io LABELS scen-full)
target_compile_definitions(scen_full_test PRIVATE SWARMFIELD_SCEN_FULL=1)
set_tests_properties(scen_full_test PROPERTIES TIMEOUT 1800)

# swarmfield-tool end to end.
swarmfield_add_test(NAME tool_scen_test SOURCES ${_fields_dir}/tool_scen_test.cpp LABELS tool)
add_dependencies(tool_scen_test swarmfield-tool)
add_test(NAME tool_scen_boston_256
         COMMAND swarmfield-tool scen ${SWARMFIELD_SHARED_DIR}/data/maps/street/Boston_0_256.map
                 ${SWARMFIELD_SHARED_DIR}/data/maps/street/Boston_0_256.map.scen --no-progress)
set_tests_properties(tool_scen_boston_256 PROPERTIES LABELS "tool;scen"
                     PASS_REGULAR_EXPRESSION "checked=950 mismatches=0 max_rel_err=")
