// jemalloc's options for the programs that link it (wm_allocator in
// CMakeLists.txt: workloadmapd and the benchmarks that stand for it). jemalloc
// reads this string when it starts; MALLOC_CONF in the environment is
// applied after it, so an operator can still change any of them.
//
// Why these: jemalloc's default keeps freed pages for 10 s ("dirty") and
// then 10 s more ("muzzy") before the system gets them back, and purges only
// while the program allocates. A daemon that answered a burst of large
// requests would stay that much larger while it idles. A background thread
// purging after 1 s keeps the resident set close to what is in use (the
// hostile-input suite's growth bound, integration_tests/hostile) at the cost
// of a few page faults when a burst comes back.

extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";
}
