#include "server/web/web_assets.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/common/file.h"

namespace wm {
// cmake/Embed.cmake: (file name, content) of every file in server/web/assets.
const std::vector<std::pair<std::string, std::string>>& EmbeddedWebAssets();
}  // namespace wm

namespace wm::web {
namespace {

using Request = observability::HttpServer::Request;
using Response = observability::HttpServer::Response;

std::string ContentType(const std::string& name) {
  if (absl::EndsWith(name, ".html")) return "text/html; charset=utf-8";
  if (absl::EndsWith(name, ".js")) return "text/javascript; charset=utf-8";
  if (absl::EndsWith(name, ".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

std::vector<std::string> Headers() {
  return {
      // The page and its assets change with the daemon: revalidate, so an
      // upgrade is seen at the next load.
      "Cache-Control: no-cache",
      "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "
      "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
      "frame-ancestors 'none'",
      "X-Content-Type-Options: nosniff",
      "Referrer-Policy: no-referrer",
  };
}

Response Serve(const std::string& name, std::string content) {
  Response response;
  response.content_type = ContentType(name);
  response.body = std::move(content);
  response.headers = Headers();
  return response;
}

}  // namespace

void RegisterWebAssets(observability::HttpServer& server, std::string directory) {
  for (const auto& [name, content] : EmbeddedWebAssets()) {
    std::string path = name == "index.html" ? "/" : "/" + name;
    if (directory.empty()) {
      server.Handle(
          path, [name = name, content = content](const Request&) { return Serve(name, content); });
      continue;
    }
    std::string file = absl::StrCat(directory, "/", name);
    server.Handle(path, [name = name, file](const Request&) {
      absl::StatusOr<std::string> content = ReadFileToString(file);
      if (!content.ok()) {
        return Response{404, "text/plain; charset=utf-8",
                        std::string(content.status().message()) + "\n"};
      }
      return Serve(name, *std::move(content));
    });
  }
}

}  // namespace wm::web
