#ifndef WM_SERVER_RPC_SERVICE_H_
#define WM_SERVER_RPC_SERVICE_H_

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "server/access/access_reviewer.h"
#include "server/access/authenticator.h"
#include "server/access/caller_limits.h"
#include "server/access/identity.h"
#include "server/common/work_pool.h"
#include "server/expressions/engine.h"
#include "server/index/workload_index.h"
#include "server/rpc/audit.h"
#include "server/rpc/kind_names.h"
#include "server/rpc/unix_peer_registry.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::rpc {

// The workloadmap.v1.WorkloadMap service over a WorkloadIndex. Reads of
// cached workloads are answered on gRPC's callback threads from published
// views; work that evaluates expressions or calls the apiserver runs on a
// small pool.
//
// Every method is registered raw (bytes in, bytes out) and parses its
// request itself (ParseRequest), so bytes that are not one get
// INVALID_ARGUMENT saying why; gRPC's own parse would answer UNIMPLEMENTED
// without a message. ResolveWorkload, the call schedulers make most, goes
// further: its common answer, a cached workload without pods, is sent from
// bytes serialized once when the view was published, instead of being
// copied, serialized and freed on every call (docs/benchmarks.md). The other
// methods are written over typed messages (ServeParsed).
class WorkloadMapService final
    : public workloadmap::v1::WorkloadMap::WithRawCallbackMethod_ResolveWorkload<
          workloadmap::v1::WorkloadMap::WithRawCallbackMethod_ListWorkloads<
              workloadmap::v1::WorkloadMap::WithRawCallbackMethod_MutatePodSpecs<
                  workloadmap::v1::WorkloadMap::WithRawCallbackMethod_GetGangInstructions<
                      workloadmap::v1::WorkloadMap::WithRawCallbackMethod_WatchWorkloads<
                          workloadmap::v1::WorkloadMap::WithRawCallbackMethod_ListDefinitions<
                              workloadmap::v1::WorkloadMap::
                                  WithRawCallbackMethod_ValidateDefinition<
                                      workloadmap::v1::WorkloadMap::CallbackService>>>>>>> {
 public:
  // The most pods plus owners an inline request resolved on gRPC's thread
  // (Options::small_inline_bytes) may send: with tiny objects ("{}") a few
  // kilobytes would otherwise hold thousands of pods to place there.
  static constexpr int kSmallInlineMaxObjects = 64;

  struct Options {
    int max_page_size = 500;
    // The daemon's gRPC message limit (--max-message-bytes): an answer
    // built larger is refused with RESOURCE_EXHAUSTED saying so, rather
    // than failing to be sent.
    int max_message_bytes = 16 << 20;
    // Live events a WatchWorkloads stream may have queued before it is
    // ended with RESOURCE_EXHAUSTED (the client resumes from its revision).
    int watch_queue_size = 1000;
    int pool_threads = 2;
    // The work pool's nice value (see WorkPool): below the callback
    // threads, above the jq workers (10).
    int pool_nice = 5;
    // Pods plus owners a ResolveWorkload call may send inline. Each costs
    // the daemon ~5 KB while the call runs (parsed, placed, answered), so
    // 10,000 bound a call's working memory to ~50 MB; past it the call
    // fails with INVALID_ARGUMENT naming the fields and the bound.
    int max_inline_objects = 10000;
    // An inline request (ResolveWorkload, GetGangInstructions' inline_pod,
    // a MutatePodSpecs dry run) of at most this many bytes, and
    // kSmallInlineMaxObjects pods and owners, is served on gRPC's calling
    // thread instead of the pool: for a workload the size of the seed
    // JobSet (9 KB, ~40 µs of work) the hand-off, a wake-up on each side,
    // costs as much as the resolution. 0 hands every one to the pool, as
    // an engine that evaluates in worker processes needs: waiting for a
    // worker must not hold a gRPC thread.
    int small_inline_bytes = 0;
    // How long such a call's expressions may run on gRPC's thread in all,
    // and how many bytes of values one evaluation may build there: past
    // either the call is done again on the pool (RunHereOrOffload). The
    // seed JobSet takes ~40 µs and builds a few KB; an expression that
    // spins to its budget (2 s) or builds a 50 MB string (~80 ms) would
    // otherwise hold a gRPC thread at the process's priority, and the other
    // calls wait behind it on the shared cores.
    absl::Duration here_slice = absl::Milliseconds(2);
    size_t here_built_bytes = 1 << 20;
    // Work queued for the pool gives up after this long when the call
    // carries no deadline of its own.
    absl::Duration default_deadline = absl::Seconds(30);
    // Names the caller of every call before it is served (outlives the
    // service); a call it does not authenticate gets UNAUTHENTICATED. Null:
    // calls are not authenticated (--authentication=none).
    const access::Authenticator* authenticator = nullptr;
    // The peers of the Unix sockets the daemon accepts itself (UnixListener),
    // for `authenticator` to name by uid or gid (outlives the service);
    // null: none.
    const UnixPeerRegistry* unix_peers = nullptr;
    // Decides, per cluster name, whether an authenticated caller may do what
    // a call asks (a SubjectAccessReview against that cluster's apiserver);
    // each outlives the service. Calls on a cluster without one, and all
    // calls when `authenticator` is null, are not authorized.
    std::map<std::string, access::AccessReviewer*> access_reviewers;
    // How often a WatchWorkloads stream asks the reviewers again what its
    // caller may see (their caches decide when the apiserver is asked): a
    // namespace gained or lost shows at the workload's next change.
    absl::Duration watch_access_recheck = absl::Seconds(30);
    // What a caller needs, cluster-wide in the first cluster, for calls on
    // objects it sends rather than names (inline ResolveWorkload,
    // GetGangInstructions and MutatePodSpecs, ValidateDefinition): they read
    // nothing of the cluster, so by default (unset) any authenticated caller
    // may make them.
    std::optional<access::ResourceAttributes> inline_permission;
    // Told of every authentication and authorization decision and every
    // apply (see AuditEvent); may be empty.
    Auditor audit;
    // Bounds each caller's call rate and open watches (outlives the
    // service); null: callers are not limited. Callers are authenticated
    // users, or, when calls are not authenticated, peer addresses.
    access::CallerLimits* limits = nullptr;
  };
  // Told of every finished call: method name, code, latency.
  using Observer = std::function<void(const char* method, grpc::StatusCode, absl::Duration)>;

  WorkloadMapService(index::WorkloadIndex& index, expressions::Engine& engine, Options options,
                     Observer observer = nullptr);

  // Until ready, ListWorkloads and WatchWorkloads answer UNAVAILABLE: a list
  // or snapshot taken before the caches are synced and resolved would be
  // incomplete, and a watch's SYNCED would claim otherwise. (Calls on one
  // object need no such guard: they answer UNAVAILABLE for kinds not yet
  // synced and resolve on demand what the index has not reached.) The
  // daemon sets it with its gRPC health status.
  void SetReady(bool ready) { ready_ = ready; }

  // Each takes the serialized request of its method and answers the
  // serialized response (a stream of WorkloadEvents for WatchWorkloads).
  grpc::ServerUnaryReactor* ResolveWorkload(grpc::CallbackServerContext* context,
                                            const grpc::ByteBuffer* request,
                                            grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ListWorkloads(grpc::CallbackServerContext* context,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* MutatePodSpecs(grpc::CallbackServerContext* context,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetGangInstructions(grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* request,
                                                grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* WatchWorkloads(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* ListDefinitions(grpc::CallbackServerContext* context,
                                            const grpc::ByteBuffer* request,
                                            grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ValidateDefinition(grpc::CallbackServerContext* context,
                                               const grpc::ByteBuffer* request,
                                               grpc::ByteBuffer* response) override;

 private:
  class WatchReactor;

  // A unary call being served: its context and reactor (made once per
  // call), and, for a method written over typed messages, what serializes
  // its response into the bytes sent (it owns both messages, which so live
  // until the call is finished; empty for ResolveWorkload, which writes its
  // bytes itself). `caller` is who authenticated, null when calls are not
  // authenticated.
  struct UnaryCall {
    grpc::CallbackServerContext* context;
    grpc::ServerUnaryReactor* reactor;
    std::function<absl::Status()> serialize_response;
    access::SharedIdentity caller;
  };
  // Serves `call` with `serve` once its caller is authenticated: at once when
  // that needs no apiserver call (a certificate, a token reviewed lately),
  // else on the pool after the TokenReview. An unauthenticated call is
  // finished with UNAUTHENTICATED and never served.
  grpc::ServerUnaryReactor* Authenticated(
      UnaryCall call, const char* method,
      std::function<grpc::ServerUnaryReactor*(const UnaryCall&)> serve);
  // Serves `call` with `serve` when its caller may do `what` on `cluster`:
  // at once when the decision is known (nothing to authorize, or a cached
  // decision), else on the pool after the SubjectAccessReview. A denied call
  // is finished with PERMISSION_DENIED naming the user, verb, resource and
  // namespace, and never served.
  grpc::ServerUnaryReactor* Authorized(const UnaryCall& call, const char* method,
                                       const std::string& cluster, access::ResourceAttributes what,
                                       std::function<grpc::ServerUnaryReactor*()> serve);
  // Serves a call on objects the caller sent with `serve` when the caller
  // has Options::inline_permission (at once when none is configured).
  grpc::ServerUnaryReactor* AuthorizedInline(const UnaryCall& call, const char* method,
                                             std::function<grpc::ServerUnaryReactor*()> serve);
  // Who `caller` counts as for Options::limits: the user, or the peer's
  // address when calls are not authenticated.
  static std::string LimitKey(const grpc::CallbackServerContext& context,
                              const access::Identity* caller);
  // One call of `caller` under Options::limits; ResourceExhausted (with
  // the retry hint in trailing metadata wm-retry-after-ms) when over.
  absl::Status AdmitCall(grpc::CallbackServerContext& context, const access::Identity* caller);
  void Audit(const AuditEvent& event) const {
    if (options_.audit) options_.audit(event);
  }
  grpc::ServerUnaryReactor* ServeResolveWorkload(const UnaryCall& call,
                                                 const grpc::ByteBuffer* request_bytes,
                                                 grpc::ByteBuffer* response_bytes);
  // Parses the request of a method written over typed messages and serves
  // it with `serve`; bytes that are not a Request are refused saying why.
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* ServeParsed(grpc::CallbackServerContext* context, const char* method,
                                        const grpc::ByteBuffer* request, grpc::ByteBuffer* response,
                                        grpc::ServerUnaryReactor* (WorkloadMapService::*serve)(
                                            const UnaryCall&, const Request*, Response*));
  grpc::ServerUnaryReactor* ServeListWorkloads(const UnaryCall& call,
                                               const workloadmap::v1::ListWorkloadsRequest* request,
                                               workloadmap::v1::ListWorkloadsResponse* response);
  grpc::ServerUnaryReactor* ServeMutatePodSpecs(
      const UnaryCall& call, const workloadmap::v1::MutatePodSpecsRequest* request,
      workloadmap::v1::MutatePodSpecsResponse* response);
  grpc::ServerUnaryReactor* ServeGetGangInstructions(
      const UnaryCall& call, const workloadmap::v1::GetGangInstructionsRequest* request,
      workloadmap::v1::GetGangInstructionsResponse* response);
  grpc::ServerUnaryReactor* ServeListDefinitions(
      const UnaryCall& call, const workloadmap::v1::ListDefinitionsRequest* request,
      workloadmap::v1::ListDefinitionsResponse* response);
  grpc::ServerUnaryReactor* ServeValidateDefinition(
      const UnaryCall& call, const workloadmap::v1::ValidateDefinitionRequest* request,
      workloadmap::v1::ValidateDefinitionResponse* response);

  // Finishes a unary call with `status` (its response serialized first when
  // it is OK) and reports it to the observer.
  void Finish(const UnaryCall& call, const char* method, absl::Time start, absl::Status status);
  // Runs `work` on the pool unless the call is already cancelled or past
  // its deadline.
  grpc::ServerUnaryReactor* Offload(const UnaryCall& call, const char* method,
                                    std::function<absl::Status()> work);
  // Finishes a call with respond(view) of a workload: on the calling thread
  // when `published` holds the index's view (or an error), else on the pool
  // with the view `resolve` computes (an object inside a workload, which the
  // index does not keep, or one the resolver has not reached yet).
  using ViewOrError = absl::StatusOr<std::shared_ptr<const index::WorkloadView>>;
  grpc::ServerUnaryReactor* AnswerWithView(
      const UnaryCall& call, const char* method, ViewOrError published,
      std::function<ViewOrError()> resolve,
      std::function<absl::Status(const std::shared_ptr<const index::WorkloadView>&)> respond);
  // Runs `work` on the calling thread and finishes the call with its
  // status: for work that neither evaluates expressions nor calls the
  // apiserver (cached reads, argument checks).
  grpc::ServerUnaryReactor* RunHere(const UnaryCall& call, const char* method,
                                    absl::FunctionRef<absl::Status()> work);
  // Whether an inline request of `bytes` carrying `objects` pods and
  // owners is served on the calling thread (Options::small_inline_bytes).
  bool IsSmallInline(size_t bytes, int objects) const {
    return bytes <= static_cast<size_t>(options_.small_inline_bytes) &&
           objects <= kSmallInlineMaxObjects;
  }
  // Work that evaluates expressions with the engine it is given.
  using EngineWork = std::function<absl::Status(expressions::Engine& engine)>;
  // Offload(work(engine_)) unless `here`. Here, work runs on the calling
  // thread with evaluations cut at Options::here_slice (RunOptions): work
  // that reaches it is costlier than its request's size promised, and is
  // done again on the pool, from the start. Its first answer is dropped,
  // so `work` must write its results only when it succeeds, or start by
  // clearing them.
  grpc::ServerUnaryReactor* RunHereOrOffload(const UnaryCall& call, const char* method, bool here,
                                             EngineWork work);

  index::WorkloadIndex& index_;
  expressions::Engine& engine_;
  const Options options_;
  Observer observer_;
  std::atomic<bool> ready_ = false;
  KindNamesCache kind_names_;
  WorkPool pool_;
};

// gRPC's status for an absl one (the codes are the same numbers).
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace wm::rpc

#endif  // WM_SERVER_RPC_SERVICE_H_
