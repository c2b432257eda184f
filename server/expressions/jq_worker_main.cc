// wm-jq-worker: evaluates jq programs for the daemon, one request at a time,
// on the socket it inherits as fd 3.
//
// libjq 1.6 is confined to this process because it can be neither shared
// between threads nor interrupted: a runaway expression loops or grows until
// it aborts the process on allocation failure. The parent bounds each
// evaluation by a deadline and kills and replaces a worker that overruns it;
// an address-space limit (its share of the daemon's jq memory budget) makes
// memory exhaustion end the worker, with kExitMemoryExhausted, instead of
// the daemon or the machine. The parent starts it with an empty environment,
// so `env` reveals nothing even if a check were missed.

extern "C" {
#include <jq.h>
}

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/expressions/jq_wire.h"

// Sanitizer runtimes reserve terabytes of address space for shadow memory;
// an address-space limit would stop them from starting.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WM_SANITIZED 1
#endif
#endif

namespace {

using namespace wm::expressions::wire;

constexpr int kSocket = 3;

// libjq calls this when an allocation fails (it would abort otherwise);
// operator new's handler is the same. Past the address-space limit nothing
// can be trusted to allocate, so the worker ends at once with the status
// that tells the parent why.
[[noreturn]] void OutOfMemory(void* /*unused*/ = nullptr) { _exit(kExitMemoryExhausted); }

// At most kMaxErrorBytes of `message`, cut at a character boundary.
std::string Truncated(std::string message) {
  if (message.size() <= kMaxErrorBytes) return message;
  constexpr char kEllipsis[] = "...";
  size_t end = kMaxErrorBytes - (sizeof(kEllipsis) - 1);
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  message.resize(end);
  message.append(kEllipsis);
  return message;
}

bool ReadExact(char* buf, size_t n) {
  while (n > 0) {
    ssize_t r = read(kSocket, buf, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    buf += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool ReadU32(uint32_t& v) {
  char b[4];
  if (!ReadExact(b, 4)) return false;
  v = GetU32(b);
  return true;
}

bool ReadStr(std::string& s) {
  uint32_t n;
  if (!ReadU32(n)) return false;
  s.resize(n);
  return n == 0 || ReadExact(s.data(), n);
}

void WriteAll(const std::string& data) {
  const char* p = data.data();
  size_t n = data.size();
  while (n > 0) {
    ssize_t w = write(kSocket, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(1);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

std::string ToString(jv value) {
  if (jv_get_kind(value) == JV_KIND_STRING) {
    std::string s(jv_string_value(value), jv_string_length_bytes(jv_copy(value)));
    jv_free(value);
    return s;
  }
  jv dumped = jv_dump_string(value, 0);
  std::string s(jv_string_value(dumped), jv_string_length_bytes(jv_copy(dumped)));
  jv_free(dumped);
  return s;
}

void CollectError(void* data, jv message) {
  auto* errors = static_cast<std::string*>(data);
  if (!errors->empty()) errors->append("; ");
  errors->append(ToString(message));
}

// Compiles `source`; on failure returns nullptr and fills `error`.
jq_state* CompileProgram(const std::string& source, std::string& error) {
  jq_state* jq = jq_init();
  if (jq == nullptr) {
    error = "cannot initialise jq";
    return nullptr;
  }
  // Per state: jq_start installs its state's handler for the evaluation.
  jq_set_nomem_handler(jq, OutOfMemory, nullptr);
  jq_set_error_cb(jq, CollectError, &error);
  if (!jq_compile(jq, source.c_str())) {
    if (error.empty()) error = "compile error";
    jq_teardown(&jq);
    return nullptr;
  }
  jq_set_error_cb(jq, nullptr, nullptr);
  return jq;
}

std::string Evaluate(jq_state* jq, uint32_t index, jv input, uint32_t max_outputs,
                     uint32_t max_bytes) {
  std::string reply;
  std::vector<std::string> outputs;
  size_t bytes = 0;
  jv pair = jv_array_append(jv_array_append(jv_array(), jv_number(index)), input);
  jq_start(jq, pair, 0);
  std::string error;
  for (;;) {
    jv out = jq_next(jq);
    if (!jv_is_valid(out)) {
      if (jv_invalid_has_msg(jv_copy(out))) {
        jv msg = jv_invalid_get_msg(out);
        error =
            jv_get_kind(msg) == JV_KIND_STRING ? ToString(msg) : ToString(msg) + " (not a string)";
      } else {
        jv_free(out);
      }
      break;
    }
    if (outputs.size() >= max_outputs) {
      jv_free(out);
      error = "query results exceed the allowed number " + std::to_string(max_outputs + 1);
      break;
    }
    // A string's JSON text is at least its bytes and two quotes: a string
    // past the bound is refused without dumping (escaping) it first.
    if (jv_get_kind(out) == JV_KIND_STRING &&
        bytes + static_cast<size_t>(jv_string_length_bytes(jv_copy(out))) + 2 > max_bytes) {
      jv_free(out);
      bytes = size_t{max_bytes} + 1;
    } else {
      jv dumped = jv_dump_string(out, 0);
      bytes += static_cast<size_t>(jv_string_length_bytes(jv_copy(dumped)));
      if (bytes <= max_bytes) {
        outputs.push_back(ToString(dumped));
      } else {
        jv_free(dumped);
      }
    }
    if (bytes > max_bytes) {
      error = "query results exceed the allowed size of " + std::to_string(max_bytes) + " bytes";
      break;
    }
  }
  if (!error.empty()) {
    reply.push_back(0);
    PutStr(reply, Truncated(std::move(error)));
    return reply;
  }
  reply.push_back(1);
  PutU32(reply, static_cast<uint32_t>(outputs.size()));
  for (const auto& o : outputs) PutStr(reply, o);
  return reply;
}

}  // namespace

// Workers run below the daemon's priority, so an expression that burns its
// whole budget (a hostile definition, or many at once) takes CPU only from
// other evaluations, not from the threads that serve cached reads and
// health checks. 10 gives a worker a tenth of a default thread's share
// when both want the same core, and the same speed when the core is idle.
constexpr int kWorkerNice = 10;

int main(int argc, char** argv) {
  setpriority(PRIO_PROCESS, 0, kWorkerNice);
  // argv[1], when given, is the address-space limit in bytes.
#ifndef WM_SANITIZED
  if (argc > 1) {
    rlim_t limit = std::strtoull(argv[1], nullptr, 10);
    if (limit > 0) {
      struct rlimit rl = {limit, limit};
      setrlimit(RLIMIT_AS, &rl);
    }
  }
#endif
  std::set_new_handler([] { OutOfMemory(); });
  jv_nomem_handler(OutOfMemory, nullptr);  // inputs are parsed outside any jq_start
  std::unordered_map<uint32_t, jq_state*> programs;
  std::unordered_map<uint32_t, jv> inputs;
  for (;;) {
    char op;
    if (!ReadExact(&op, 1)) return 0;  // parent closed the socket
    switch (op) {
      case kCompile:
      case kCheck: {
        uint32_t id = 0;
        std::string source, error;
        if (op == kCompile && !ReadU32(id)) return 1;
        if (!ReadStr(source)) return 1;
        jq_state* jq = CompileProgram(source, error);
        std::string reply(1, jq != nullptr ? 1 : 0);
        PutStr(reply, Truncated(std::move(error)));
        if (jq != nullptr) {
          if (op == kCompile) {
            if (auto it = programs.find(id); it != programs.end()) jq_teardown(&it->second);
            programs[id] = jq;
          } else {
            jq_teardown(&jq);
          }
        }
        WriteAll(reply);
        break;
      }
      case kFree: {
        uint32_t id;
        if (!ReadU32(id)) return 1;
        if (auto it = programs.find(id); it != programs.end()) {
          jq_teardown(&it->second);
          programs.erase(it);
        }
        break;
      }
      case kLoad: {
        uint32_t slot;
        std::string json;
        if (!ReadU32(slot) || !ReadStr(json)) return 1;
        if (auto it = inputs.find(slot); it != inputs.end()) jv_free(it->second);
        inputs[slot] = jv_parse_sized(json.data(), static_cast<int>(json.size()));
        break;
      }
      case kClearInputs:
        for (auto& [slot, value] : inputs) jv_free(value);
        inputs.clear();
        break;
      case kEvaluate: {
        uint32_t id, index, slot, max_outputs, max_bytes;
        if (!ReadU32(id) || !ReadU32(index) || !ReadU32(slot) || !ReadU32(max_outputs) ||
            !ReadU32(max_bytes)) {
          return 1;
        }
        auto program = programs.find(id);
        auto input = inputs.find(slot);
        if (program == programs.end() || input == inputs.end() || !jv_is_valid(input->second)) {
          std::string reply(1, 0);
          PutStr(reply, program == programs.end() ? "unknown program" : "unknown input");
          WriteAll(reply);
          break;
        }
        WriteAll(Evaluate(program->second, index, jv_copy(input->second), max_outputs, max_bytes));
        break;
      }
      default:
        return 1;
    }
  }
}
