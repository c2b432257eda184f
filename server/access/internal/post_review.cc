#include "server/access/internal/post_review.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"
#include "server/common/json_reader.h"
#include "server/common/user_text.h"

namespace wm::access::internal {

absl::StatusOr<Json> PostReview(const kube::ApiClient& client, absl::string_view path,
                                const Json& review, absl::Duration timeout,
                                absl::string_view what) {
  kube::HttpRequest request;
  request.method = "POST";
  request.path = std::string(path);
  request.content_type = "application/json";
  request.body = review.dump();
  request.timeout = timeout;
  absl::StatusOr<kube::HttpResponse> response = client.Do(request);
  if (!response.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot ", what, ": ", response.status().message()));
  }
  absl::StatusOr<Json> answer = ParseJson(response->body);
  if (response->status != 201 && response->status != 200) {
    std::string message = answer.ok() ? FindString(*answer, {"message"}) : "";
    return absl::UnavailableError(absl::StrCat("cannot ", what, ": the apiserver answered ",
                                               response->status, message.empty() ? "" : ": ",
                                               QuoteUserText(message)));
  }
  if (!answer.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot ", what, ": the answer is not JSON: ", answer.status().message()));
  }
  return answer;
}

}  // namespace wm::access::internal
