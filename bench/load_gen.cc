// A gRPC load generator for workloadmapd: ResolveWorkload by reference or
// grpc.health.v1 Check (the cheapest call the same server answers, as the
// yardstick), closed loop (N calls outstanding, each completion issues the
// next) or at a fixed rate (open loop). Both methods go through the same
// generic stub with a request serialized once, so the client-side cost is
// the same for both and the difference is the daemon's.
//
//   load_gen --address 127.0.0.1:50051 --method resolve --mode closed --in-flight 16
//   load_gen --address unix:/tmp/wm.sock --method resolve --mode rate --rate 1000 --json
//
// Fixed rate: send times are fixed in advance (start + i / rate) and latency
// is measured from the intended send time, so a stalled server or a late
// sender shows up in the latency instead of thinning the samples
// (coordinated omission). At most --max-outstanding calls are in flight;
// a send that finds none free is dropped and counted.
//
// Exit status: 0 if calls were made and every one succeeded, 1 if any
// failed, none completed or the first response was not what was asked for,
// 2 for bad flags or no connection, 3 if calls never completed (their
// callbacks did not come long after their deadlines).
// Figures and the matrix script: docs/benchmarks.md, bench/run-load.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/latency_histogram.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/common/file.h"
#include "server/common/json.h"
#include "server/common/yaml_json.h"
#include "workloadmap/v1/service.pb.h"

namespace wm::bench {
namespace {

constexpr char kResolveMethod[] = "/workloadmap.v1.WorkloadMap/ResolveWorkload";
constexpr char kCheckMethod[] = "/grpc.health.v1.Health/Check";
constexpr char kServiceName[] = "workloadmap.v1.WorkloadMap";
constexpr int kCodes = 17;  // grpc::StatusCode 0 (OK) .. 16 (UNAUTHENTICATED)

// ---- Flags ------------------------------------------------------------------

struct Flags {
  std::string address;
  std::string method = "resolve";
  // --method inline: the workload (first document), its owners and pods.
  std::string inline_file;
  std::string namespace_ = "default";
  std::string resource = "jobsets";
  std::string name = "demo";
  std::string mode = "closed";
  int in_flight = 1;
  double rate = 1000;
  int max_outstanding = 1000;
  absl::Duration duration = absl::Seconds(10);
  absl::Duration warmup = absl::Seconds(2);
  absl::Duration timeout = absl::Seconds(10);
  int channels = 1;
  int server_pid = 0;
  // "Bearer <token>" from --token-file, sent with every call; empty: none.
  std::string authorization;
  bool json = false;
};

constexpr char kUsage[] = R"(Usage: load_gen --address ADDR [FLAGS]

  --address ADDR         HOST:PORT or unix:PATH of workloadmapd (required)
  --method M             resolve (ResolveWorkload by ref), inline
                         (ResolveWorkload of --inline-file's objects) or
                         check (grpc.health.v1 Check); default resolve
  --inline-file FILE     YAML or JSON documents: the workload first, then
                         its pods and the objects between (Jobs, ...)
  --namespace NS         the ref of ResolveWorkload: namespace (default),
  --resource R           plural resource (jobsets)
  --name NAME            and name (demo)
  --mode M               closed (--in-flight calls outstanding) or rate
                         (--rate calls per second, open loop); default closed
  --in-flight N          closed loop: calls outstanding (1)
  --rate RPS             fixed rate: calls per second (1000)
  --max-outstanding N    fixed rate: calls in flight at most; sends beyond
                         are dropped and counted (1000)
  --duration D           measured time (10s)
  --warmup D             load before measuring (2s)
  --timeout D            deadline of each call (10s)
  --channels K           calls spread over K channels, each its own
                         connection (1)
  --server-pid PID       also report the CPU time process PID (the daemon,
                         on this machine) used in the measured window
  --token-file FILE      send the bearer token in FILE with every call (a
                         daemon with --authentication=kubernetes)
  --json                 one JSON object on stdout instead of text
)";

absl::Status ParseFlags(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "--json") {
      f.json = true;
      continue;
    }
    std::string value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
    }
    auto number = [&](auto& out) -> absl::Status {
      bool ok;
      if constexpr (std::is_same_v<std::decay_t<decltype(out)>, double>) {
        ok = absl::SimpleAtod(value, &out) && out > 0;
      } else {
        ok = absl::SimpleAtoi(value, &out) && out > 0;
      }
      return ok ? absl::OkStatus()
                : absl::InvalidArgumentError(absl::StrCat(arg, ": not a positive number: ", value));
    };
    auto duration = [&](absl::Duration& out, bool zero_ok) -> absl::Status {
      if (!absl::ParseDuration(value, &out) || out < absl::ZeroDuration() ||
          (!zero_ok && out == absl::ZeroDuration())) {
        return absl::InvalidArgumentError(
            absl::StrCat(arg, ": not a duration (10s, 500ms): ", value));
      }
      return absl::OkStatus();
    };
    absl::Status s;
    if (arg == "--address") {
      f.address = value;
    } else if (arg == "--method") {
      f.method = value;
    } else if (arg == "--inline-file") {
      f.inline_file = value;
    } else if (arg == "--namespace") {
      f.namespace_ = value;
    } else if (arg == "--resource") {
      f.resource = value;
    } else if (arg == "--name") {
      f.name = value;
    } else if (arg == "--mode") {
      f.mode = value;
    } else if (arg == "--in-flight") {
      s = number(f.in_flight);
    } else if (arg == "--rate") {
      s = number(f.rate);
    } else if (arg == "--max-outstanding") {
      s = number(f.max_outstanding);
    } else if (arg == "--duration") {
      s = duration(f.duration, false);
    } else if (arg == "--warmup") {
      s = duration(f.warmup, true);
    } else if (arg == "--timeout") {
      s = duration(f.timeout, false);
    } else if (arg == "--channels") {
      s = number(f.channels);
    } else if (arg == "--server-pid") {
      s = number(f.server_pid);
    } else if (arg == "--token-file") {
      absl::StatusOr<std::string> text = ReadFileToString(value);
      if (!text.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--token-file: ", text.status().message()));
      }
      std::string token(absl::StripAsciiWhitespace(*text));
      if (token.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("--token-file: no token in ", value));
      }
      f.authorization = "Bearer " + token;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    }
    if (!s.ok()) return s;
  }
  if (f.address.empty()) return absl::InvalidArgumentError("--address is required");
  if (f.method != "resolve" && f.method != "inline" && f.method != "check") {
    return absl::InvalidArgumentError("--method: resolve, inline or check");
  }
  if ((f.method == "inline") != !f.inline_file.empty()) {
    return absl::InvalidArgumentError("--inline-file goes with --method inline, and only there");
  }
  if (f.mode != "closed" && f.mode != "rate") {
    return absl::InvalidArgumentError("--mode: closed or rate");
  }
  return absl::OkStatus();
}

// ---- Time -------------------------------------------------------------------

int64_t NowNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void SleepUntil(int64_t nanos) {
  timespec ts{static_cast<time_t>(nanos / 1000000000), static_cast<long>(nanos % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

// CPU time (user + system) of this process so far.
double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// CPU time (user + system, all threads) of another process so far, from
// /proc/PID/stat; negative when it cannot be read.
double ProcessCpuSeconds(int pid) {
  absl::StatusOr<std::string> read = ReadFileToString(absl::StrCat("/proc/", pid, "/stat"));
  if (!read.ok()) return -1;
  const std::string& stat = *read;
  // Fields after the command name (which may hold spaces), from field 3.
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(paren + 2), ' ');
  uint64_t utime, stime;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return -1;
  }
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

// ---- The load ---------------------------------------------------------------

class LoadGenerator {
 public:
  explicit LoadGenerator(const Flags& flags)
      : flags_(flags), expected_namespace_(flags.namespace_), expected_name_(flags.name) {}

  // ResolveWorkload of `path`'s objects, inline: the workload is the first
  // document, Pods go to pod_json and the rest to owner_json.
  absl::StatusOr<workloadmap::v1::ResolveWorkloadRequest> InlineRequest(const std::string& path) {
    auto docs = wm::ReadYamlFile(path);
    if (!docs.ok()) return docs.status();
    if (docs->empty() || !(*docs)[0].is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": no workload object"));
    }
    workloadmap::v1::ResolveWorkloadRequest request;
    auto* inline_workload = request.mutable_inline_();
    inline_workload->set_object_json((*docs)[0].dump());
    for (size_t i = 1; i < docs->size(); ++i) {
      const wm::Json& doc = (*docs)[i];
      bool pod = doc.is_object() && doc.value("kind", "") == "Pod";
      (pod ? inline_workload->add_pod_json() : inline_workload->add_owner_json())
          ->assign(doc.dump());
    }
    const wm::Json& metadata = (*docs)[0].value("metadata", wm::Json::object());
    expected_namespace_ = metadata.value("namespace", "");
    expected_name_ = metadata.value("name", "");
    return request;
  }

  // Connects every channel and serializes the request; fails when a
  // channel does not connect within 10 s.
  absl::Status Connect() {
    std::string bytes;
    if (flags_.method == "resolve") {
      workloadmap::v1::ResolveWorkloadRequest request;
      request.mutable_ref()->set_namespace_(flags_.namespace_);
      request.mutable_ref()->set_resource(flags_.resource);
      request.mutable_ref()->set_name(flags_.name);
      bytes = request.SerializeAsString();
      method_ = kResolveMethod;
    } else if (flags_.method == "inline") {
      auto request = InlineRequest(flags_.inline_file);
      if (!request.ok()) return request.status();
      bytes = request->SerializeAsString();
      method_ = kResolveMethod;
    } else {
      grpc::health::v1::HealthCheckRequest request;
      request.set_service(kServiceName);
      bytes = request.SerializeAsString();
      method_ = kCheckMethod;
    }
    grpc::Slice slice(bytes);
    request_ = grpc::ByteBuffer(&slice, 1);
    for (int i = 0; i < flags_.channels; ++i) {
      grpc::ChannelArguments args;
      // Channels with equal arguments share one connection (the global
      // subchannel pool); a distinct argument keeps them apart.
      args.SetInt("wm.load_gen.channel", i);
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      auto channel =
          grpc::CreateCustomChannel(flags_.address, grpc::InsecureChannelCredentials(), args);
      if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
        return absl::UnavailableError(
            absl::StrCat("channel ", i, " did not connect to ", flags_.address, " within 10 s"));
      }
      stubs_.push_back(std::make_unique<grpc::GenericStub>(channel));
    }
    int slots = flags_.mode == "closed" ? flags_.in_flight : flags_.max_outstanding;
    calls_.reserve(slots);
    for (int i = 0; i < slots; ++i) {
      calls_.push_back(std::make_unique<Call>());
      calls_.back()->stub = stubs_[i % stubs_.size()].get();
      calls_.back()->request = request_;
      free_.push_back(calls_.back().get());
    }
    return absl::OkStatus();
  }

  // Runs the load. Fails if calls are still outstanding long after the run
  // ended: each has a deadline, so gRPC owes every one a callback by then;
  // a caller (a CI job) is told so instead of waiting without a word.
  absl::Status Run() {
    start_ = NowNanos();
    window_start_ = start_ + absl::ToInt64Nanoseconds(flags_.warmup);
    window_end_ = window_start_ + absl::ToInt64Nanoseconds(flags_.duration);
    std::thread sender;
    if (flags_.mode == "closed") {
      std::vector<Call*> all;
      {
        std::lock_guard lock(mu_);
        all.swap(free_);
      }
      for (Call* call : all) Issue(call, NowNanos());
    } else {
      sender = std::thread([this] { SendAtRate(); });
    }
    SleepUntil(window_start_);
    double cpu_start = CpuSeconds();
    double server_start = flags_.server_pid ? ProcessCpuSeconds(flags_.server_pid) : -1;
    SleepUntil(window_end_);
    client_cpu_ = CpuSeconds() - cpu_start;
    if (server_start >= 0) {
      double server_end = ProcessCpuSeconds(flags_.server_pid);
      if (server_end >= 0) server_cpu_ = server_end - server_start;
    }
    if (sender.joinable()) sender.join();
    // Closed loop: completions after the window issue nothing more; wait
    // for the last calls (each has a deadline).
    absl::Duration patience = flags_.timeout + absl::Seconds(10);
    std::unique_lock lock(mu_);
    if (!drained_.wait_for(lock, absl::ToChronoNanoseconds(patience),
                           [this] { return outstanding_ == 0; })) {
      return absl::DeadlineExceededError(
          absl::StrCat(outstanding_, " calls had no answer ", absl::FormatDuration(patience),
                       " after the run ended (each has a deadline of ",
                       absl::FormatDuration(flags_.timeout), ")"));
    }
    return absl::OkStatus();
  }

  // Prints the result; returns the exit status.
  int Report() const {
    double seconds = absl::ToDoubleSeconds(flags_.duration);
    uint64_t calls = 0, errors = 0;
    std::map<std::string, uint64_t> by_code;
    for (int code = 0; code < kCodes; ++code) {
      uint64_t n = codes_[code].load();
      calls += n;
      if (code != 0 && n > 0) {
        errors += n;
        by_code[CodeName(code)] = n;
      }
    }
    std::string verified = Verify();
    std::string transport = flags_.address.rfind("unix:", 0) == 0 ? "unix" : "tcp";
    bool rate = flags_.mode == "rate";
    auto us = [](uint64_t nanos) { return nanos / 1000.0; };
    const LatencyHistogram& h = latency_;
    if (flags_.json) {
      std::vector<std::string> codes;
      for (const auto& [name, n] : by_code) codes.push_back(absl::StrFormat("\"%s\": %d", name, n));
      std::vector<std::string> examples;
      for (int code = 1; code < kCodes; ++code) {
        if (!examples_[code].empty()) {
          examples.push_back(
              absl::StrFormat("\"%s\": \"%s\"", CodeName(code), JsonEscape(examples_[code])));
        }
      }
      absl::PrintF(
          "{\"method\": \"%s\", \"transport\": \"%s\", \"address\": \"%s\", \"mode\": \"%s\", "
          "\"in_flight\": %s, \"rate\": %s, \"channels\": %d, \"duration_s\": %.3f, "
          "\"calls\": %d, \"errors\": %d, \"errors_by_code\": {%s}, "
          "\"error_examples\": {%s}, \"dropped\": %d, \"qps\": %.1f, "
          "\"latency_us\": {\"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, \"p999\": %.1f, "
          "\"max\": %.1f, \"mean\": %.1f}, \"send_lag_p99_us\": %s, "
          "\"response_bytes\": %d, \"client_cpu_percent\": %.1f, \"server_cpu_percent\": %s, "
          "\"server_cpu_us_per_call\": %s, \"verify\": \"%s\"}\n",
          flags_.method, transport, JsonEscape(flags_.address), flags_.mode,
          rate ? "null" : absl::StrCat(flags_.in_flight), rate ? absl::StrCat(flags_.rate) : "null",
          flags_.channels, seconds, calls, errors, absl::StrJoin(codes, ", "),
          absl::StrJoin(examples, ", "), dropped_.load(), calls / seconds, us(h.Percentile(0.5)),
          us(h.Percentile(0.9)), us(h.Percentile(0.99)), us(h.Percentile(0.999)), us(h.Max()),
          h.Mean() / 1000, rate ? absl::StrFormat("%.1f", us(send_lag_.Percentile(0.99))) : "null",
          response_bytes_, 100 * client_cpu_ / seconds,
          server_cpu_ < 0 ? "null" : absl::StrFormat("%.1f", 100 * server_cpu_ / seconds),
          server_cpu_ < 0 || calls == 0 ? "null"
                                        : absl::StrFormat("%.1f", 1e6 * server_cpu_ / calls),
          JsonEscape(verified.empty() ? "ok" : verified));
    } else {
      absl::PrintF("%s over %s (%s), %s, %d channel%s, %.1f s measured after %.1f s warm-up\n",
                   flags_.method, transport, flags_.address,
                   rate ? absl::StrCat(flags_.rate, " calls/s, open loop")
                        : absl::StrCat(flags_.in_flight, " in flight, closed loop"),
                   flags_.channels, flags_.channels == 1 ? "" : "s", seconds,
                   absl::ToDoubleSeconds(flags_.warmup));
      absl::PrintF("calls %d  errors %d%s  dropped %d  QPS %.1f\n", calls, errors,
                   by_code.empty() ? "" : absl::StrCat(" (", FormatCodes(by_code), ")"),
                   dropped_.load(), calls / seconds);
      absl::PrintF("latency µs: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n",
                   us(h.Percentile(0.5)), us(h.Percentile(0.9)), us(h.Percentile(0.99)),
                   us(h.Percentile(0.999)), us(h.Max()), h.Mean() / 1000);
      if (rate) absl::PrintF("send lag p99 µs: %.1f\n", us(send_lag_.Percentile(0.99)));
      absl::PrintF("response %d bytes; client CPU %.1f %% of one core\n", response_bytes_,
                   100 * client_cpu_ / seconds);
      if (server_cpu_ >= 0 && calls > 0) {
        absl::PrintF("server CPU %.1f %% of one core, %.1f µs per call\n",
                     100 * server_cpu_ / seconds, 1e6 * server_cpu_ / calls);
      }
      for (int code = 1; code < kCodes; ++code) {
        if (!examples_[code].empty()) {
          absl::PrintF("first %s: %s\n", CodeName(code), examples_[code].c_str());
        }
      }
      if (!verified.empty()) absl::PrintF("verify: %s\n", verified.c_str());
    }
    return calls > 0 && errors == 0 && verified.empty() ? 0 : 1;
  }

 private:
  // One outstanding call; reused, so no allocation per call beyond gRPC's.
  struct Call {
    grpc::GenericStub* stub = nullptr;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
    std::optional<grpc::ClientContext> context;
    int64_t intended = 0;  // when the call was meant to start
  };

  void Issue(Call* call, int64_t intended) {
    {
      std::lock_guard lock(mu_);
      ++outstanding_;
    }
    call->intended = intended;
    call->context.emplace();
    if (!flags_.authorization.empty()) {
      call->context->AddMetadata("authorization", flags_.authorization);
    }
    call->context->set_deadline(std::chrono::system_clock::now() +
                                absl::ToChronoMilliseconds(flags_.timeout));
    call->response.Clear();
    call->stub->UnaryCall(&*call->context, method_, grpc::StubOptions(), &call->request,
                          &call->response, [this, call](grpc::Status s) { Done(call, s); });
  }

  void Done(Call* call, const grpc::Status& status) {
    int64_t now = NowNanos();
    bool measured = flags_.mode == "closed"
                        ? now >= window_start_ && now < window_end_
                        : call->intended >= window_start_ && call->intended < window_end_;
    if (measured) {
      latency_.Record(now - call->intended);
      int code = static_cast<int>(status.error_code());
      if (code < 0 || code >= kCodes) code = grpc::StatusCode::UNKNOWN;
      codes_[code].fetch_add(1, std::memory_order_relaxed);
      if (!status.ok()) {
        RememberError(code, status.error_message());
      } else if (!have_response_.exchange(true)) {
        first_response_ = call->response;
        response_bytes_ = call->response.Length();
      }
    }
    if (flags_.mode == "closed" && now < window_end_) {
      Issue(call, now);
      std::lock_guard lock(mu_);
      --outstanding_;
      return;
    }
    std::lock_guard lock(mu_);
    if (flags_.mode == "rate") free_.push_back(call);
    if (--outstanding_ == 0) drained_.notify_all();
  }

  // Open loop: call i is due at start + i / rate, whatever came back.
  void SendAtRate() {
    // Wake within microseconds of the due time, not the default 50 µs slack.
    prctl(PR_SET_TIMERSLACK, 1UL);
    double period = 1e9 / flags_.rate;
    for (int64_t i = 0;; ++i) {
      int64_t due = start_ + static_cast<int64_t>(i * period);
      if (due >= window_end_) break;
      SleepUntil(due);
      int64_t now = NowNanos();
      bool measured = due >= window_start_;
      if (measured) send_lag_.Record(now - due);
      Call* call = nullptr;
      {
        std::lock_guard lock(mu_);
        if (!free_.empty()) {
          call = free_.back();
          free_.pop_back();
        }
      }
      if (call == nullptr) {
        if (measured) dropped_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      Issue(call, due);
    }
  }

  void RememberError(int code, const std::string& message) {
    std::lock_guard lock(mu_);
    if (examples_[code].empty()) examples_[code] = message.empty() ? "(no message)" : message;
  }

  // Checks that the first successful response answers the request: the
  // named workload, or SERVING. Empty when it does (or none came).
  std::string Verify() const {
    if (!have_response_) return "";
    std::vector<grpc::Slice> slices;
    if (!first_response_.Dump(&slices).ok()) return "cannot read the response";
    std::string bytes;
    for (const grpc::Slice& s : slices) {
      bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    if (flags_.method == "resolve" || flags_.method == "inline") {
      workloadmap::v1::ResolveWorkloadResponse response;
      if (!response.ParseFromString(bytes)) return "response is not a ResolveWorkloadResponse";
      const auto& ref = response.workload().ref();
      if (ref.name() != expected_name_ || ref.namespace_() != expected_namespace_) {
        return absl::StrCat("resolved ", ref.namespace_(), "/", ref.name(), ", asked for ",
                            expected_namespace_, "/", expected_name_);
      }
    } else {
      grpc::health::v1::HealthCheckResponse response;
      if (!response.ParseFromString(bytes)) return "response is not a HealthCheckResponse";
      if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
        return absl::StrCat("health status ", response.status(), ", not SERVING");
      }
    }
    return "";
  }

  // "NOT_FOUND" for 5: gRPC's status codes are Abseil's, number for number.
  static std::string CodeName(int code) {
    return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  }

  static std::string FormatCodes(const std::map<std::string, uint64_t>& by_code) {
    std::vector<std::string> parts;
    for (const auto& [name, n] : by_code) parts.push_back(absl::StrCat(name, " ", n));
    return absl::StrJoin(parts, ", ");
  }

  static std::string JsonEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        out += absl::StrFormat("\\u%04x", c);
      } else {
        out += c;
      }
    }
    return out;
  }

  const Flags flags_;
  // The workload the answers must name: --namespace/--name, or the inline
  // file's first document.
  std::string expected_namespace_;
  std::string expected_name_;
  std::string method_;

  grpc::ByteBuffer request_;
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs_;
  std::vector<std::unique_ptr<Call>> calls_;
  int64_t start_ = 0, window_start_ = 0, window_end_ = 0;

  std::mutex mu_;
  std::condition_variable drained_;
  std::vector<Call*> free_;                   // guarded by mu_
  int outstanding_ = 0;                       // guarded by mu_
  std::array<std::string, kCodes> examples_;  // guarded by mu_

  LatencyHistogram latency_;
  LatencyHistogram send_lag_;
  std::array<std::atomic<uint64_t>, kCodes> codes_{};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<bool> have_response_{false};
  grpc::ByteBuffer first_response_;  // written once, by the have_response_ winner
  int64_t response_bytes_ = 0;
  double client_cpu_ = 0;
  double server_cpu_ = -1;  // unknown
};

}  // namespace
}  // namespace wm::bench

int main(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, so every absl::Mutex lock inside
  // gRPC also updates the deadlock detector's lock graph: a tenth of the
  // generator's instructions per call (callgrind: 70 K -> 63 K). The
  // generator shares the cores with the daemon it measures.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  wm::bench::Flags flags;
  if (absl::Status s = wm::bench::ParseFlags(argc, argv, flags); !s.ok()) {
    std::fprintf(stderr, "load_gen: %s\n\n%s", std::string(s.message()).c_str(), wm::bench::kUsage);
    return 2;
  }
  auto generator = std::make_unique<wm::bench::LoadGenerator>(flags);
  if (absl::Status s = generator->Connect(); !s.ok()) {
    std::fprintf(stderr, "load_gen: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (absl::Status s = generator->Run(); !s.ok()) {
    std::fprintf(stderr, "load_gen: %s\n", std::string(s.message()).c_str());
    // The outstanding calls' callbacks point into the generator: it cannot
    // be destroyed, and gRPC's teardown would wait for them.
    std::fflush(stderr);
    std::_Exit(3);
  }
  int status = generator->Report();
  // The result reaches the caller even if the teardown below stalls.
  std::fflush(stdout);
  return status;
}
