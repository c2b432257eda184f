#ifndef WM_SERVER_COMMON_INTERNAL_MALLCTL_H_
#define WM_SERVER_COMMON_INTERNAL_MALLCTL_H_

#include <cstddef>

// jemalloc's control interface, present when the program links jemalloc
// (the daemon does: wm_allocator in CMakeLists.txt); weak, so that programs
// on glibc's malloc (the sanitizer builds) link too and see null. For
// heap.cc and its test only.
extern "C" int mallctl(const char* name, void* old_value, size_t* old_length, void* new_value,
                       size_t new_length) __attribute__((weak));

#endif  // WM_SERVER_COMMON_INTERNAL_MALLCTL_H_
