#pragma once
// Callgrind's client requests when valgrind's headers are installed (they cost nothing outside
// valgrind): a benchmark switches instrumentation on for the part it measures only, so
// `valgrind --tool=callgrind --instr-atstart=no` counts the instructions of that part alone
// (not the set-up: map loads, spawns, warm-up).
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define SWARMFIELD_CALLGRIND_ON() CALLGRIND_START_INSTRUMENTATION
#define SWARMFIELD_CALLGRIND_OFF() CALLGRIND_STOP_INSTRUMENTATION
#else
#define SWARMFIELD_CALLGRIND_ON() static_cast<void>(0)
#define SWARMFIELD_CALLGRIND_OFF() static_cast<void>(0)
#endif
