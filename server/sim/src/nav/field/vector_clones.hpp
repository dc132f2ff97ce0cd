#pragma once
// SWARMFIELD_VECTOR_CLONES: marks a plain loop the compiler vectorizes for clones picked at load
// time on x86-64 (AVX-512 as in x86-64-v4, AVX2, baseline), so one binary runs everywhere and
// uses the widest vectors the CPU has. For integer code only: identical results on every clone.
// Not under ThreadSanitizer, whose runtime is not yet up when the clones' resolvers run.
#if defined(__SANITIZE_THREAD__)
#define SWARMFIELD_NO_TARGET_CLONES 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SWARMFIELD_NO_TARGET_CLONES 1
#endif
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SWARMFIELD_NO_TARGET_CLONES)
#define SWARMFIELD_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define SWARMFIELD_VECTOR_CLONES
#endif
