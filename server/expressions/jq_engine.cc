#include "server/expressions/jq_engine.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/common/cpus.h"
#include "server/common/json_reader.h"
#include "server/expressions/jq_scanner.h"
#include "server/expressions/jq_wire.h"

namespace wm::expressions {
namespace {

namespace wire = ::wm::expressions::wire;

// Generous bound for compiling: jq 1.6 re-parses its builtin library on
// every compile (tens of milliseconds); sources are length-limited upstream.
constexpr absl::Duration kCompileTimeout = absl::Seconds(30);

std::string FindWorkerPath(const JqEngineOptions& options) {
  if (!options.worker_path.empty()) return options.worker_path;
  if (const char* env = std::getenv("WM_JQ_WORKER"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "wm-jq-worker";
  // Beside the executable (the build tree's bin/), in the installed layout
  // (bin/../libexec/workloadmap/), or ../bin/ from it (build tree's tests/).
  for (const auto& candidate :
       {self.parent_path() / "wm-jq-worker", self.parent_path() / WM_JQ_WORKER_FROM_BINDIR,
        self.parent_path().parent_path() / "bin" / "wm-jq-worker"}) {
    if (std::filesystem::exists(candidate, ec)) return candidate.lexically_normal().string();
  }
  return "wm-jq-worker";
}

// One source wrapped so that comments and user defs stay inside it.
std::string Wrap(const std::string& source) {
  return absl::StrCat("(\n", RewriteElselessIf(source), "\n)");
}

// Binary dispatch on $__i over [lo, hi).
std::string Dispatch(size_t lo, size_t hi) {
  if (hi - lo == 1) return absl::StrCat("__e", lo);
  size_t mid = lo + (hi - lo) / 2;
  return absl::StrCat("if $__i < ", mid, " then ", Dispatch(lo, mid), " else ", Dispatch(mid, hi),
                      " end");
}

// All sources as one program taking [index, input].
std::string CombinedProgram(const std::vector<std::string>& sources) {
  std::string text = JqPolyfills();
  for (size_t i = 0; i < sources.size(); ++i) {
    absl::StrAppend(&text, "def __e", i, ": ", Wrap(sources[i]), ";\n");
  }
  absl::StrAppend(&text, ".[0] as $__i | .[1] | ",
                  sources.empty() ? "empty" : Dispatch(0, sources.size()));
  return text;
}

class Pool;

class JqProgram : public Program {
 public:
  JqProgram(uint32_t id, std::vector<std::string> sources, std::shared_ptr<Pool> pool)
      : id_(id),
        sources_(std::move(sources)),
        combined_(CombinedProgram(sources_)),
        pool_(std::move(pool)) {}
  ~JqProgram() override;

  size_t size() const override { return sources_.size(); }
  const std::string& source(size_t index) const override { return sources_[index]; }
  uint32_t id() const { return id_; }
  const std::string& combined() const { return combined_; }

 private:
  const uint32_t id_;
  const std::vector<std::string> sources_;
  const std::string combined_;
  std::weak_ptr<Pool> pool_;
};

// One worker process and what it holds. Owned by the pool; used by one
// session at a time.
struct Worker {
  pid_t pid = -1;
  int fd = -1;
  absl::flat_hash_set<uint32_t> programs;
  // Bumped on every (re)spawn so sessions know to reload their inputs.
  uint64_t generation = 0;
};

class Pool : public std::enable_shared_from_this<Pool> {
 public:
  Pool(std::string worker_path, int size, int64_t worker_memory_limit)
      : worker_path_(std::move(worker_path)), worker_memory_limit_(worker_memory_limit) {
    for (int i = 0; i < size; ++i) {
      workers_.push_back(std::make_unique<Worker>());
      free_.push_back(workers_.back().get());
    }
  }

  ~Pool() {
    for (auto& w : workers_) Kill(*w);
  }

  Worker* Acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !free_.empty(); });
    Worker* w = free_.front();
    free_.pop_front();
    return w;
  }

  void Release(Worker* w) {
    {
      std::lock_guard lock(mu_);
      free_.push_back(w);
    }
    cv_.notify_one();
  }

  void ForgetProgram(uint32_t id) {
    std::lock_guard lock(mu_);
    freed_programs_.push_back(id);
  }

  // Tells `w` to drop programs that no longer exist. Called with w acquired.
  void SendFrees(Worker& w) {
    std::vector<uint32_t> ids;
    {
      std::lock_guard lock(mu_);
      ids = freed_programs_;
    }
    for (uint32_t id : ids) {
      if (!w.programs.erase(id)) continue;
      std::string msg(1, wire::kFree);
      wire::PutU32(msg, id);
      if (!Send(w, msg)) return;
    }
  }

  absl::Status EnsureAlive(Worker& w) {
    if (w.pid > 0) return absl::OkStatus();
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      return absl::InternalError(absl::StrCat("socketpair: ", std::strerror(errno)));
    }
    int child_fd = fds[1];
    if (child_fd == 3) {  // dup2(3, 3) would keep close-on-exec set
      child_fd = fcntl(fds[1], F_DUPFD_CLOEXEC, 4);
      close(fds[1]);
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, child_fd, 3);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::string limit = std::to_string(worker_memory_limit_);
    char* argv[] = {const_cast<char*>(worker_path_.c_str()), limit.data(), nullptr};
    char* envp[] = {nullptr};
    pid_t pid;
    int rc = posix_spawn(&pid, worker_path_.c_str(), &actions, nullptr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    close(child_fd);
    if (rc != 0) {
      close(fds[0]);
      return absl::FailedPreconditionError(
          absl::StrCat("cannot start jq worker ", worker_path_, ": ", std::strerror(rc)));
    }
    w.pid = pid;
    w.fd = fds[0];
    w.programs.clear();
    ++w.generation;
    return absl::OkStatus();
  }

  static void Kill(Worker& w) {
    if (w.pid > 0) {
      kill(w.pid, SIGKILL);
      int status;
      while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    if (w.fd >= 0) close(w.fd);
    w.pid = -1;
    w.fd = -1;
    w.programs.clear();
  }

  static bool Send(Worker& w, const std::string& data) {
    const char* p = data.data();
    size_t n = data.size();
    while (n > 0) {
      ssize_t s = send(w.fd, p, n, MSG_NOSIGNAL);
      if (s < 0 && errno == EINTR) continue;
      if (s <= 0) return false;
      p += s;
      n -= static_cast<size_t>(s);
    }
    return true;
  }

  // Reads exactly n bytes before `deadline`. On timeout or a dead worker the
  // worker is killed and an error describes what happened.
  absl::Status Receive(Worker& w, char* buf, size_t n, absl::Time deadline,
                       absl::Duration budget) const {
    while (n > 0) {
      int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
      if (ms < 0) ms = 0;
      pollfd p = {w.fd, POLLIN, 0};
      int rc = poll(&p, 1, static_cast<int>(ms));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) {
        Kill(w);
        return absl::DeadlineExceededError(absl::StrCat(
            "expression exceeded its evaluation budget of ", absl::FormatDuration(budget)));
      }
      ssize_t r = read(w.fd, buf, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        int status = 0;
        pid_t pid = w.pid;
        if (pid > 0) waitpid(pid, &status, 0);
        w.pid = -1;
        close(w.fd);
        w.fd = -1;
        w.programs.clear();
        return WorkerDeath(status);
      }
      buf += r;
      n -= static_cast<size_t>(r);
    }
    return absl::OkStatus();
  }

  // Why a worker ended, from its wait status.
  absl::Status WorkerDeath(int status) const {
    if (WIFEXITED(status) && WEXITSTATUS(status) == wire::kExitMemoryExhausted) {
      return absl::ResourceExhaustedError(absl::StrCat("expression exceeded its memory limit of ",
                                                       worker_memory_limit_ >> 20, " MiB"));
    }
    if (WIFSIGNALED(status)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "jq worker died with signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)),
          ") while evaluating; its memory limit is ", worker_memory_limit_ >> 20, " MiB"));
    }
    return absl::InternalError(
        absl::StrCat("jq worker exited with status ", WEXITSTATUS(status), " while evaluating"));
  }

  absl::StatusOr<uint32_t> ReceiveU32(Worker& w, absl::Time deadline, absl::Duration budget) const {
    char b[4];
    if (absl::Status s = Receive(w, b, 4, deadline, budget); !s.ok()) return s;
    return wire::GetU32(b);
  }

  // A length-prefixed string of at most `max_size` bytes. A worker that
  // announces more breaks the protocol (it bounds what it sends): it is
  // killed before anything that size is allocated here.
  absl::StatusOr<std::string> ReceiveStr(Worker& w, absl::Time deadline, absl::Duration budget,
                                         size_t max_size) const {
    auto n = ReceiveU32(w, deadline, budget);
    if (!n.ok()) return n.status();
    if (*n > max_size) {
      Kill(w);
      return absl::InternalError(
          absl::StrCat("jq worker sent ", *n, " bytes where at most ", max_size, " may come"));
    }
    std::string s(*n, '\0');
    if (*n > 0) {
      if (absl::Status st = Receive(w, s.data(), *n, deadline, budget); !st.ok()) return st;
    }
    return s;
  }

  // Sends a compile (id != 0 keeps the program) or check and returns the
  // compiler's error text, empty on success.
  absl::StatusOr<std::string> CompileIn(Worker& w, uint32_t id, const std::string& source,
                                        bool keep) {
    if (absl::Status s = EnsureAlive(w); !s.ok()) return s;
    std::string msg(1, keep ? wire::kCompile : wire::kCheck);
    if (keep) wire::PutU32(msg, id);
    wire::PutStr(msg, source);
    if (!Send(w, msg)) {
      Kill(w);
      return absl::UnavailableError("jq worker is gone");
    }
    absl::Time deadline = absl::Now() + kCompileTimeout;
    char ok;
    if (absl::Status s = Receive(w, &ok, 1, deadline, kCompileTimeout); !s.ok()) return s;
    auto error = ReceiveStr(w, deadline, kCompileTimeout, wire::kMaxErrorBytes);
    if (!error.ok()) return error.status();
    if (ok && keep) w.programs.insert(id);
    return ok ? std::string() : (error->empty() ? std::string("compile error") : *error);
  }

  uint32_t NextProgramId() { return next_program_id_.fetch_add(1) + 1; }

 private:
  const std::string worker_path_;
  const int64_t worker_memory_limit_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Worker*> free_;
  std::vector<uint32_t> freed_programs_;
  std::atomic<uint32_t> next_program_id_{0};
};

JqProgram::~JqProgram() {
  if (auto pool = pool_.lock()) pool->ForgetProgram(id_);
}

class JqSession : public Session {
 public:
  JqSession(Pool& pool, Worker& worker, const EvalLimits& limits)
      : pool_(pool), worker_(worker), limits_(limits) {}

  ~JqSession() override {
    if (!inputs_.empty() && worker_.pid > 0) {
      if (!Pool::Send(worker_, std::string(1, wire::kClearInputs))) Pool::Kill(worker_);
    }
  }

  InputId Load(const Json& input) override {
    inputs_.push_back(input.dump(-1, ' ', false, Json::error_handler_t::replace));
    loaded_generation_.push_back(0);
    return static_cast<InputId>(inputs_.size() - 1);
  }

  absl::StatusOr<Outputs> EvaluateViews(const Program& program, size_t index,
                                        InputId input) override {
    const auto& jq_program = static_cast<const JqProgram&>(program);
    if (input < 0 || static_cast<size_t>(input) >= inputs_.size()) {
      return absl::InvalidArgumentError("unknown input");
    }
    if (index >= program.size()) return absl::InvalidArgumentError("unknown expression");
    if (absl::Status s = pool_.EnsureAlive(worker_); !s.ok()) return s;
    pool_.SendFrees(worker_);
    if (!worker_.programs.contains(jq_program.id())) {
      auto error = pool_.CompileIn(worker_, jq_program.id(), jq_program.combined(), true);
      if (!error.ok()) return error.status();
      if (!error->empty()) return absl::InvalidArgumentError(*error);
    }
    if (loaded_generation_[input] != worker_.generation) {
      std::string msg(1, wire::kLoad);
      wire::PutU32(msg, static_cast<uint32_t>(input));
      wire::PutStr(msg, inputs_[input]);
      if (!Pool::Send(worker_, msg)) {
        Pool::Kill(worker_);
        return absl::UnavailableError("jq worker is gone");
      }
      loaded_generation_[input] = worker_.generation;
    }
    std::string msg(1, wire::kEvaluate);
    wire::PutU32(msg, jq_program.id());
    wire::PutU32(msg, static_cast<uint32_t>(index));
    wire::PutU32(msg, static_cast<uint32_t>(input));
    wire::PutU32(msg, static_cast<uint32_t>(limits_.max_outputs));
    wire::PutU32(msg, static_cast<uint32_t>(limits_.max_output_bytes));
    if (!Pool::Send(worker_, msg)) {
      Pool::Kill(worker_);
      return absl::UnavailableError("jq worker is gone");
    }
    absl::Time deadline = absl::Now() + limits_.budget;
    char ok;
    if (absl::Status s = pool_.Receive(worker_, &ok, 1, deadline, limits_.budget); !s.ok()) {
      return s;
    }
    if (!ok) {
      auto error = pool_.ReceiveStr(worker_, deadline, limits_.budget, wire::kMaxErrorBytes);
      if (!error.ok()) return error.status();
      return absl::InvalidArgumentError(*error);
    }
    auto count = pool_.ReceiveU32(worker_, deadline, limits_.budget);
    if (!count.ok()) return count.status();
    if (*count > static_cast<uint32_t>(limits_.max_outputs)) {
      Pool::Kill(worker_);
      return absl::InternalError(absl::StrCat("jq worker sent ", *count, " outputs"));
    }
    Outputs outputs;
    outputs.reserve(*count);
    size_t remaining = limits_.max_output_bytes;
    for (uint32_t i = 0; i < *count; ++i) {
      auto text = pool_.ReceiveStr(worker_, deadline, limits_.budget, remaining);
      if (!text.ok()) return text.status();
      remaining -= text->size();
      // jq can build values deeper than any input may be; the bound keeps
      // them from the daemon's recursive walks.
      auto value = ParseJson(*text);
      if (!value.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("output: ", value.status().message()));
      }
      outputs.push_back(Output::Value(*std::move(value)));
    }
    return outputs;
  }

 private:
  Pool& pool_;
  Worker& worker_;
  const EvalLimits& limits_;
  std::vector<std::string> inputs_;
  std::vector<uint64_t> loaded_generation_;
};

class JqEngine : public Engine {
 public:
  JqEngine(std::shared_ptr<Pool> pool, EvalLimits limits)
      : pool_(std::move(pool)), limits_(limits) {}

  absl::StatusOr<std::shared_ptr<const Program>> Compile(
      const std::vector<std::string>& sources, std::vector<CompileError>* errors) override {
    auto program = std::make_shared<JqProgram>(pool_->NextProgramId(), sources, pool_);
    Worker* w = pool_->Acquire();
    absl::Status result = absl::OkStatus();
    auto combined = pool_->CompileIn(*w, program->id(), program->combined(), true);
    if (!combined.ok()) {
      result = combined.status();
    } else if (!combined->empty()) {
      // Find which sources fail, one by one (rare: definitions are validated).
      std::vector<CompileError> found;
      for (size_t i = 0; i < sources.size(); ++i) {
        auto error = pool_->CompileIn(*w, 0, JqPolyfills() + Wrap(sources[i]), false);
        if (!error.ok()) {
          result = error.status();
          break;
        }
        if (!error->empty()) found.push_back({i, *error});
      }
      if (result.ok()) {
        if (found.empty()) found.push_back({0, *combined});
        result = absl::InvalidArgumentError(
            absl::StrCat(found.size(), " expression(s) do not compile: ", found[0].message));
        if (errors != nullptr) *errors = std::move(found);
      }
    }
    pool_->Release(w);
    if (!result.ok()) return result;
    return program;
  }

  // A worker cannot be stopped short of its budget: RunOptions::yield_at
  // is not applied (the daemon never runs libjq on gRPC's threads).
  absl::Status Run(absl::FunctionRef<absl::Status(Session&)> fn, const RunOptions&) override {
    Worker* w = pool_->Acquire();
    absl::Status status;
    {
      JqSession session(*pool_, *w, limits_);
      status = fn(session);
    }
    pool_->Release(w);
    return status;
  }

  const EvalLimits& limits() const override { return limits_; }

 private:
  std::shared_ptr<Pool> pool_;
  EvalLimits limits_;
};

}  // namespace

const std::string& JqPolyfills() {
  // One line, so that line numbers in compile errors count from the source.
  static const std::string kPolyfills =
      "def abs: if type == \"number\" and . < 0 then - . else . end; "
      "def toarray: if type == \"array\" then . else [.] end; "
      "def pick(pathexps): . as $top | reduce path(pathexps) as $p (null; setpath($p; $top | "
      "getpath($p))); "
      "def ltrim: if type == \"string\" then sub(\"^\\\\s+\"; \"\") else error(\"trim input "
      "must be a string\") end; "
      "def rtrim: if type == \"string\" then sub(\"\\\\s+$\"; \"\") else error(\"trim input "
      "must be a string\") end; "
      "def trim: ltrim | rtrim; "
      "def trimstr($x): ltrimstr($x) | rtrimstr($x); "
      "def add(f): reduce f as $x (null; . + $x); "
      "def scan($re; $flags): match($re; \"g\" + $flags) | if (.captures | length) > 0 then "
      "[.captures[].string] else .string end; "
      // jq 1.6's label/break is swallowed by a postfix `?` inside the
      // generator (`first(f | tonumber?)` yields every output), so these
      // use no break: limit runs the generator to its end (the evaluation
      // budget bounds it), keeps the first $n outputs, and raises an error
      // only if it comes before them, as gojq's early stop would.
      "def limit($n; f): if $n > 0 then foreach (try (f | [0, .]) catch [1, .]) as $e (0; . + 1; "
      "if . > $n then empty elif $e[0] == 0 then $e[1] else error($e[1]) end) elif $n == 0 then "
      "empty else f end; "
      "def first(f): [limit(1; f)] | if length > 0 then .[0] else empty end; "
      "def isempty(g): [limit(1; g)] | length == 0; "
      "def any(g; cond): isempty(first(g | cond | select(.))) | not; "
      "def all(g; cond): isempty(first(g | cond | select(. | not))); "
      "def any(f): any(.[]; f); def all(f): all(.[]; f); def any: any(.); def all: all(.);\n";
  return kPolyfills;
}

absl::StatusOr<JqPoolPlan> PlanJqPool(const JqEngineOptions& options, int available_cpus) {
  JqPoolPlan plan;
  plan.workers = options.workers;
  if (plan.workers <= 0) {
    // Two at least: a worker's round trip is mostly waiting, so even one
    // CPU keeps two busy (the resolver thread and an inline call, say).
    // Fewer than one per CPU when the budget would make them small: a pod
    // without a CPU limit sees every CPU of its node.
    int64_t affordable = options.memory_limit_bytes / kAutoJqWorkerMemoryBytes;
    plan.workers = static_cast<int>(
        std::max<int64_t>(2, std::min<int64_t>(std::max(1, available_cpus), affordable)));
  }
  plan.worker_memory_limit_bytes = options.memory_limit_bytes / plan.workers;
  if (plan.worker_memory_limit_bytes < kMinJqWorkerMemoryBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a jq memory limit of ", options.memory_limit_bytes >> 20, " MiB gives each of ",
        plan.workers, " jq workers ", plan.worker_memory_limit_bytes >> 20, " MiB, less than the ",
        kMinJqWorkerMemoryBytes >> 20,
        " MiB a worker needs: raise the limit or use fewer workers"));
  }
  return plan;
}

absl::StatusOr<std::unique_ptr<Engine>> NewJqEngine(const JqEngineOptions& options) {
  auto plan = PlanJqPool(options, AvailableCpus());
  if (!plan.ok()) return plan.status();
  std::string path = FindWorkerPath(options);
  if (access(path.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("jq worker binary not found or not executable: ", path,
                     " (set WM_JQ_WORKER or JqEngineOptions.worker_path)"));
  }
  auto pool = std::make_shared<Pool>(path, plan->workers, plan->worker_memory_limit_bytes);
  return std::make_unique<JqEngine>(std::move(pool), options.limits);
}

}  // namespace wm::expressions
