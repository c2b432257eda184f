// `wmctl describe -f FILE|-`: resolution in-process, no cluster.
#include "absl/strings/str_cat.h"
#include "client/wmctl/input.h"
#include "client/wmctl/invocation.h"
#include "server/resolution/resolver.h"

namespace wm::wmctl {

int Invocation::Describe() {
  if (!args_.positional.empty()) return Usage("describe -f takes no TYPE or NAME");
  auto text = ReadInput(args_.Last("--filename"), in_);
  if (!text.ok()) return Fail(2, std::string(text.status().message()));
  auto docs = ReadDocuments(*text);
  if (!docs.ok()) return Fail(2, std::string(docs.status().message()));
  if (docs->empty()) return Fail(2, "the file holds no object");
  for (const Json& d : *docs) {
    if (!d.is_object() || !d.contains("apiVersion") || !d.contains("kind")) {
      return Fail(2, "every object needs apiVersion and kind");
    }
  }
  auto registry = LoadRegistry();
  if (!registry.ok()) return Fail(1, std::string(registry.status().message()));
  std::string warnings = RejectedWarnings(RegistryRejected());
  // The workload: the first object that is not a Pod, else the first.
  size_t workload = 0;
  for (size_t i = 0; i < docs->size(); ++i) {
    if ((*docs)[i]["kind"] != "Pod") {
      workload = i;
      break;
    }
  }
  const Json& object = (*docs)[workload];
  Gvk gvk =
      GvkFromApiVersion(object["apiVersion"].get<std::string>(), object["kind"].get<std::string>());
  auto def = (*registry)->ForKind(gvk);
  if (!def.ok()) {
    if (absl::IsNotFound(def.status())) {
      if (settings_.output != "table") {
        Print({{"error", "no_definition_for_type"},
               {"gvk", gvk.ToString()},
               {"message", "no Karta definition covers this workload type"},
               {"hint", "add one with --definitions PATH"}});
      }
      err_ << warnings;
      return Fail(4, std::string(def.status().message()));
    }
    err_ << warnings;
    return Fail(2, std::string(def.status().message()));
  }
  resolution::WorkloadInput input{&object};
  for (size_t i = 0; i < docs->size(); ++i) {
    if (i == workload) continue;
    ((*docs)[i]["kind"] == "Pod" ? input.pods : input.owners).push_back(&(*docs)[i]);
  }
  auto engine = Engine();
  auto resolved = resolution::ResolveWorkload(**def, **engine, input);
  if (!resolved.ok()) {
    err_ << warnings;
    return Fail(1, std::string(resolved.status().message()));
  }
  DescribeOptions options = Options(true, !input.pods.empty());
  if (settings_.output == "table") {
    out_ << DescribeText(*resolved, options);
  } else {
    Print(DescribeJson(*resolved, options));
  }
  err_ << warnings;
  for (const auto& w : resolved->warnings()) err_ << "warning: " << w << "\n";
  return 0;
}

}  // namespace wm::wmctl
