# Spatial hash, swarm and world tests, and the headless-sim replay check (owner: sim-swarm).
swarmfield_add_test(NAME spatial_hash_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/spatial_hash_test.cpp
                    LIBS swarmfield::sim LABELS sim)
# sample_flow()'s fast path against the original checked formulation (bit for bit).
swarmfield_add_test(NAME sample_flow_fast_path_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/sample_flow_fast_path_test.cpp
                    LIBS swarmfield::sim swarmfield::io LABELS sim)
swarmfield_add_test(NAME swarm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/swarm_test.cpp
                    LIBS swarmfield::sim swarmfield::io LABELS sim)
swarmfield_add_test(NAME world_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/world_test.cpp
                    LIBS swarmfield::sim LABELS sim)
# The worker pool, and Swarm::step over it: 1, 2, 3 threads give bit-identical state.
swarmfield_add_test(NAME worker_pool_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/worker_pool_test.cpp
                    LIBS swarmfield::sim LABELS sim)
swarmfield_add_test(NAME swarm_threads_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/swarm_threads_test.cpp
                    LIBS swarmfield::sim swarmfield::io LABELS sim)
# Replaces the global operator new to count allocations: kept in its own executable.
swarmfield_add_test(NAME swarm_alloc_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/swarm_alloc_test.cpp
                    LIBS swarmfield::sim LABELS sim)

if(TARGET swarmfield-tool)
  # Same arguments twice => same last line (and a different seed => a different hash).
  add_test(NAME sim_tool_replay
           COMMAND ${CMAKE_COMMAND}
                   -DTOOL=$<TARGET_FILE:swarmfield-tool>
                   -DMAP=${SWARMFIELD_SHARED_DIR}/data/maps/street/Boston_0_256.map
                   -P ${CMAKE_CURRENT_LIST_DIR}/sim_tool_replay.cmake)
  set_tests_properties(sim_tool_replay PROPERTIES LABELS "sim;tool" TIMEOUT 120)
endif()
