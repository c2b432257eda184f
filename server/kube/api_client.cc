#include "server/kube/api_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/common/json.h"
#include "server/common/json_reader.h"

namespace wm::kube {
namespace {

constexpr size_t kMaxErrorBody = 1 << 20;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// scheme://host[:port][/prefix] split for CURLOPT_CONNECT_TO.
struct ServerUrl {
  std::string scheme, host, port, prefix;
};

ServerUrl SplitServer(absl::string_view server) {
  ServerUrl url;
  size_t scheme_end = server.find("://");
  url.scheme =
      scheme_end == absl::string_view::npos ? "https" : std::string(server.substr(0, scheme_end));
  absl::string_view rest =
      scheme_end == absl::string_view::npos ? server : server.substr(scheme_end + 3);
  size_t slash = rest.find('/');
  if (slash != absl::string_view::npos) {
    url.prefix = std::string(rest.substr(slash));
    rest = rest.substr(0, slash);
  }
  while (!url.prefix.empty() && url.prefix.back() == '/') url.prefix.pop_back();
  size_t colon = rest.rfind(':');
  size_t bracket = rest.rfind(']');
  if (colon != absl::string_view::npos && (bracket == absl::string_view::npos || colon > bracket)) {
    url.host = std::string(rest.substr(0, colon));
    url.port = std::string(rest.substr(colon + 1));
  } else {
    url.host = std::string(rest);
    url.port = url.scheme == "http" ? "80" : "443";
  }
  return url;
}

struct Transfer {
  CURL* curl = nullptr;
  absl::FunctionRef<bool(absl::string_view)>* on_bytes = nullptr;
  const std::atomic<bool>* cancel = nullptr;
  HttpResponse response;
  bool stopped_by_consumer = false;
  bool status_known = false;
  bool streaming = false;
  // Stream(): no byte for `idle_timeout` ends the transfer.
  absl::Duration idle_timeout = absl::InfiniteDuration();
  absl::Time last_byte = absl::Now();
  bool idle_expired = false;
};

size_t OnWrite(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  t->last_byte = absl::Now();
  if (!t->status_known) {
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->response.status);
    t->status_known = true;
    t->streaming = t->on_bytes != nullptr && t->response.status / 100 == 2;
  }
  if (t->streaming) {
    if (!(*t->on_bytes)(absl::string_view(data, n))) {
      t->stopped_by_consumer = true;
      return 0;
    }
    // The idle clock measures the wait for the server, not our own work: a
    // consumer that takes long over one large event must not make the next
    // progress callback see a silent connection.
    t->last_byte = absl::Now();
    return n;
  }
  if (t->response.body.size() + n > kMaxErrorBody && t->on_bytes != nullptr) return n;
  t->response.body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  absl::string_view line(data, size * count);
  if (absl::StartsWithIgnoreCase(line, "retry-after:")) {
    int seconds = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(12)), &seconds)) {
      t->response.retry_after_seconds = seconds;
    }
  }
  return size * count;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->cancel != nullptr && t->cancel->load(std::memory_order_relaxed)) return 1;
  // libcurl calls this about once a second even when nothing arrives.
  if (absl::Now() - t->last_byte > t->idle_timeout) {
    t->idle_expired = true;
    return 1;
  }
  return 0;
}

}  // namespace

// DNS cache and TLS sessions shared by all handles, with the locks libcurl
// asks for. Connections are not shared: libcurl does not support sharing its
// connection cache between concurrent threads, and with HTTP/2 a request
// then waits to multiplex on a connection another thread's blocking watch
// owns — after an apiserver restart every informer but one hung that way.
// Each request opens its own connection; TLS session resumption keeps the
// handshake cheap.
struct ApiClient::Shared {
  CURLSH* share = nullptr;
  std::mutex locks[CURL_LOCK_DATA_LAST];
  ServerUrl url;
  std::string connect_to;  // host:port:real-host:real-port for tls-server-name

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Shared*>(user)->locks[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Shared*>(user)->locks[data].unlock();
  }
};

ApiClient::ApiClient(ClusterConnection connection)
    : connection_(std::move(connection)), shared_(std::make_unique<Shared>()) {
  GlobalInit();
  shared_->share = curl_share_init();
  curl_share_setopt(shared_->share, CURLSHOPT_LOCKFUNC, &Shared::Lock);
  curl_share_setopt(shared_->share, CURLSHOPT_UNLOCKFUNC, &Shared::Unlock);
  curl_share_setopt(shared_->share, CURLSHOPT_USERDATA, shared_.get());
  curl_share_setopt(shared_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(shared_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  shared_->url = SplitServer(connection_.server);
  if (!connection_.tls_server_name.empty()) {
    // Verify the certificate against tls-server-name while connecting to the
    // real host: address the name and redirect the connection.
    shared_->connect_to = absl::StrCat(connection_.tls_server_name, ":", shared_->url.port, ":",
                                       shared_->url.host, ":", shared_->url.port);
  }
}

ApiClient::~ApiClient() { curl_share_cleanup(shared_->share); }

absl::StatusOr<HttpResponse> ApiClient::Do(const HttpRequest& request) const {
  return Perform(request, nullptr, nullptr, absl::ZeroDuration());
}

absl::StatusOr<HttpResponse> ApiClient::Stream(const HttpRequest& request,
                                               absl::FunctionRef<bool(absl::string_view)> on_bytes,
                                               const std::atomic<bool>* cancel,
                                               absl::Duration idle_timeout) const {
  return Perform(request, &on_bytes, cancel, idle_timeout);
}

namespace {

// Whether every name of `as` fits in a header value: a user name from a
// client certificate or a token review is not trusted to.
bool FitsInHeaders(const Impersonation& as) {
  auto fits = [](absl::string_view v) {
    return std::none_of(v.begin(), v.end(),
                        [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
  };
  if (!fits(as.user) || !fits(as.uid)) return false;
  for (const std::string& group : as.groups) {
    if (!fits(group)) return false;
  }
  for (const auto& [key, values] : as.extra) {
    if (!fits(key)) return false;
    for (const std::string& value : values) {
      if (!fits(value)) return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<HttpResponse> ApiClient::Perform(
    const HttpRequest& request, absl::FunctionRef<bool(absl::string_view)>* on_bytes,
    const std::atomic<bool>* cancel, absl::Duration idle_timeout) const {
  if (request.impersonate && !FitsInHeaders(*request.impersonate)) {
    return absl::InvalidArgumentError(
        "cannot act as this user: a name holds a line break or a NUL");
  }
  const ServerUrl& url = shared_->url;
  std::string host = connection_.tls_server_name.empty() ? url.host : connection_.tls_server_name;
  std::string full_url =
      absl::StrCat(url.scheme, "://", host, ":", url.port, url.prefix, request.path);
  for (int attempt = 0;; ++attempt) {
    Credential credential;
    if (connection_.credentials != nullptr) {
      absl::StatusOr<Credential> current = connection_.credentials->Current();
      if (!current.ok()) {
        return absl::UnavailableError(
            absl::StrCat("credentials for ", connection_.server, ": ", current.status().message()));
      }
      credential = *std::move(current);
    }
    CURL* curl = curl_easy_init();
    if (curl == nullptr) return absl::ResourceExhaustedError("curl_easy_init failed");
    Transfer t;
    t.curl = curl;
    t.on_bytes = on_bytes;
    t.cancel = cancel;
    char error[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(curl, CURLOPT_SHARE, shared_->share);
    curl_easy_setopt(curl, CURLOPT_URL, full_url.c_str());
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, 15L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnWrite);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_slist* connect_to = nullptr;
    if (!shared_->connect_to.empty()) {
      connect_to = curl_slist_append(connect_to, shared_->connect_to.c_str());
      curl_easy_setopt(curl, CURLOPT_CONNECT_TO, connect_to);
    }
    if (on_bytes == nullptr) {
      curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                       static_cast<long>(absl::ToInt64Milliseconds(request.timeout)));
    } else {
      t.idle_timeout = idle_timeout;
    }
    // TLS.
    curl_blob ca{}, cert{}, key{};
    if (connection_.insecure_skip_tls_verify) {
      curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!connection_.ca_pem.empty()) {
      ca = {const_cast<char*>(connection_.ca_pem.data()), connection_.ca_pem.size(),
            CURL_BLOB_NOCOPY};
      curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
    }
    const std::string& cert_pem = credential.client_cert_pem.empty() ? connection_.client_cert_pem
                                                                     : credential.client_cert_pem;
    const std::string& key_pem =
        credential.client_cert_pem.empty() ? connection_.client_key_pem : credential.client_key_pem;
    if (!cert_pem.empty()) {
      cert = {const_cast<char*>(cert_pem.data()), cert_pem.size(), CURL_BLOB_NOCOPY};
      key = {const_cast<char*>(key_pem.data()), key_pem.size(), CURL_BLOB_NOCOPY};
      curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert);
      curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key);
      curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (!connection_.proxy_url.empty()) {
      curl_easy_setopt(curl, CURLOPT_PROXY, connection_.proxy_url.c_str());
    }
    // Headers.
    curl_slist* headers = nullptr;
    auto add_header = [&headers](const std::string& line) {
      headers = curl_slist_append(headers, line.c_str());
    };
    add_header("Accept: " + request.accept);
    add_header("User-Agent: workloadmapd/0.1");
    if (!credential.bearer_token.empty()) {
      add_header("Authorization: Bearer " + credential.bearer_token);
    }
    const Impersonation& as = request.impersonate ? *request.impersonate : connection_.impersonate;
    if (!as.user.empty()) {
      add_header("Impersonate-User: " + as.user);
      for (const std::string& group : as.groups) add_header("Impersonate-Group: " + group);
      if (!as.uid.empty()) add_header("Impersonate-Uid: " + as.uid);
      for (const auto& [key, values] : as.extra) {
        for (const std::string& value : values) {
          add_header(absl::StrCat("Impersonate-Extra-", QueryEscape(key), ": ", value));
        }
      }
    }
    if (!request.content_type.empty()) add_header("Content-Type: " + request.content_type);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (request.method == "GET") {
      curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
    }

    CURLcode code = curl_easy_perform(curl);
    if (!t.status_known) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &t.response.status);
    curl_slist_free_all(headers);
    curl_slist_free_all(connect_to);
    curl_easy_cleanup(curl);

    if (code == CURLE_WRITE_ERROR && t.stopped_by_consumer) return std::move(t.response);
    if (code == CURLE_ABORTED_BY_CALLBACK && t.idle_expired) {
      return absl::DeadlineExceededError(absl::StrCat(
          request.method, " ", request.path, ": no data for ", absl::FormatDuration(idle_timeout)));
    }
    if (code == CURLE_ABORTED_BY_CALLBACK) {
      return absl::CancelledError(absl::StrCat(request.method, " ", request.path, ": cancelled"));
    }
    if (code == CURLE_OPERATION_TIMEDOUT) {
      return absl::DeadlineExceededError(
          absl::StrCat(request.method, " ", request.path, ": ", error[0] ? error : "timed out"));
    }
    if (code != CURLE_OK) {
      return absl::UnavailableError(absl::StrCat(request.method, " ", connection_.server,
                                                 request.path, ": ",
                                                 error[0] ? error : curl_easy_strerror(code)));
    }
    if (t.response.status == 401 && connection_.credentials != nullptr && attempt == 0) {
      connection_.credentials->Invalidate(credential);
      continue;
    }
    return std::move(t.response);
  }
}

std::string QueryEscape(absl::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string StatusMessage(absl::string_view body) {
  absl::StatusOr<Json> status = ParseJson(body);
  if (status.ok() && status->is_object() && status->value("kind", "") == "Status") {
    return status->value("message", std::string(body.substr(0, 200)));
  }
  return std::string(body.substr(0, 200));
}

}  // namespace wm::kube
