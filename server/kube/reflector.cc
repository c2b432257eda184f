#include "server/kube/reflector.h"

#include <simdjson.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/kube/watch_stream.h"

namespace wm::kube {

absl::Duration Backoff::Next(absl::Time now) {
  if (now - last_failure_ > policy_.reset_after) failures_ = 0;
  last_failure_ = now;
  absl::Duration wait = policy_.initial;
  for (int i = 0; i < failures_ && wait < policy_.cap; ++i) wait = wait * policy_.factor;
  wait = std::min(wait, policy_.cap);
  ++failures_;
  return wait * (1.0 + absl::Uniform(random_, 0.0, policy_.jitter));
}

const char* StateName(ReflectorHealth::State state) {
  switch (state) {
    case ReflectorHealth::State::kSyncing:
      return "Syncing";
    case ReflectorHealth::State::kSynced:
      return "Synced";
    case ReflectorHealth::State::kForbidden:
      return "Forbidden";
    case ReflectorHealth::State::kNotFound:
      return "NotFound";
    case ReflectorHealth::State::kFailing:
      return "Failing";
  }
  return "?";
}

Reflector::Reflector(const ApiClient& client, ApiResource resource, ReflectorOptions options,
                     Store* store, ChangeSink on_change)
    : client_(client),
      resource_(std::move(resource)),
      options_(std::move(options)),
      store_(store),
      on_change_(std::move(on_change)),
      backoff_(options_.backoff),
      watch_list_supported_(options_.use_watch_list) {}

void Reflector::Stop() {
  cancel_.store(true);
  std::lock_guard<std::mutex> lock(stop_mu_);
  stopped_ = true;
  stop_cv_.notify_all();
}

bool Reflector::Sleep(absl::Duration duration) {
  std::unique_lock<std::mutex> lock(stop_mu_);
  return !stop_cv_.wait_for(lock, absl::ToChronoNanoseconds(duration), [this] { return stopped_; });
}

ReflectorHealth Reflector::Health() const {
  std::unique_lock lock(mu_);
  return health_;
}

void Reflector::SetState(ReflectorHealth::State state, std::string message) {
  std::unique_lock lock(mu_);
  health_.state = state;
  health_.message = std::move(message);
}

void Reflector::MarkSynced() {
  std::unique_lock lock(mu_);
  health_.state = ReflectorHealth::State::kSynced;
  health_.has_synced = true;
  health_.message.clear();
  health_.resource_version = resource_version_;
  ++health_.lists;
}

std::string Reflector::QuerySuffix() const {
  return options_.label_selector.empty()
             ? ""
             : absl::StrCat("&labelSelector=", QueryEscape(options_.label_selector));
}

void Reflector::Run() {
  bool first_watch = true;
  while (!cancel_.load()) {
    Outcome outcome;
    if (need_list_ || resource_version_.empty()) {
      outcome = options_.use_watch_list && watch_list_supported_ ? Watch(/*initial=*/true) : List();
    } else {
      if (!first_watch) {
        std::unique_lock lock(mu_);
        ++health_.watch_restarts;
      }
      first_watch = false;
      outcome = Watch(/*initial=*/false);
    }
    switch (outcome) {
      case Outcome::kStopped:
        return;
      case Outcome::kRewatch:
        break;
      case Outcome::kRelist:
        need_list_ = true;
        break;
      case Outcome::kBackoff: {
        absl::Duration wait = backoff_.Next(absl::Now());
        if (retry_after_seconds_ > 0) {
          wait = std::max(wait, absl::Seconds(retry_after_seconds_));
          retry_after_seconds_ = 0;
        }
        if (!Sleep(wait)) return;
        break;
      }
    }
  }
}

Reflector::Outcome Reflector::OnTransportError(const absl::Status& status, const char* what) {
  if (absl::IsCancelled(status) || cancel_.load()) return Outcome::kStopped;
  SetState(ReflectorHealth::State::kFailing, absl::StrCat(what, ": ", status.message()));
  return Outcome::kBackoff;
}

Reflector::Outcome Reflector::OnHttpError(const HttpResponse& response, const char* what) {
  std::string message = absl::StrCat(what, " ", resource_.Name(), ": HTTP ", response.status, ": ",
                                     StatusMessage(response.body));
  retry_after_seconds_ = response.retry_after_seconds;
  switch (response.status) {
    case 410:  // the resourceVersion was compacted away
    {
      std::unique_lock lock(mu_);
      ++health_.relists_410;
    }
      resource_version_.clear();
      return Outcome::kRelist;
    case 403:
      SetState(ReflectorHealth::State::kForbidden, std::move(message));
      resource_version_.clear();
      return Outcome::kBackoff;
    case 404: {
      // The resource is no longer served: its objects are gone.
      SetState(ReflectorHealth::State::kNotFound, std::move(message));
      std::vector<Change> changes = store_->Replace({});
      if (!changes.empty()) on_change_(std::move(changes));
      resource_version_.clear();
      return Outcome::kBackoff;
    }
    case 504:
      // ResourceVersionTooLarge: this apiserver has not seen our version yet
      // (a lagging replica); back off, then take a fresh consistent list.
      if (absl::StrContains(response.body, "ResourceVersionTooLarge") ||
          absl::StrContains(response.body, "Too large resource version")) {
        resource_version_.clear();
      }
      [[fallthrough]];
    default:
      SetState(ReflectorHealth::State::kFailing, std::move(message));
      return Outcome::kBackoff;
  }
}

Reflector::Outcome Reflector::List() {
  simdjson::dom::parser parser;
  std::vector<std::shared_ptr<const CachedObject>> objects;
  std::string continue_token, list_version;
  for (;;) {
    if (cancel_.load()) return Outcome::kStopped;
    std::string path = absl::StrCat(resource_.CollectionPath(options_.namespace_),
                                    "?limit=", options_.page_size, QuerySuffix());
    if (!continue_token.empty()) absl::StrAppend(&path, "&continue=", QueryEscape(continue_token));
    HttpRequest request;
    request.path = std::move(path);
    request.timeout = absl::Minutes(1);
    absl::StatusOr<HttpResponse> response = client_.Do(request);
    if (!response.ok()) return OnTransportError(response.status(), "list");
    if (response->status == 410 && !continue_token.empty()) {
      // The continue token expired (compaction): restart the whole list so
      // that the result is one consistent snapshot.
      continue_token.clear();
      objects.clear();
      continue;
    }
    if (response->status != 200) return OnHttpError(*response, "list");
    simdjson::dom::element list;
    simdjson::dom::array items;
    if (parser.parse(response->body).get(list) != simdjson::SUCCESS ||
        list["items"].get(items) != simdjson::SUCCESS) {
      // A null "items" is an empty list.
      if (list.is_object() && list["items"].is_null()) {
        items = simdjson::dom::array();
      } else {
        std::unique_lock lock(mu_);
        ++health_.decode_errors;
        health_.state = ReflectorHealth::State::kFailing;
        health_.message = absl::StrCat("list ", resource_.Name(), ": malformed response");
        return Outcome::kBackoff;
      }
    }
    for (simdjson::dom::element item : items) {
      absl::StatusOr<std::shared_ptr<const CachedObject>> object =
          CachedObject::Decode(item, options_.shape);
      if (!object.ok()) {
        std::unique_lock lock(mu_);
        ++health_.decode_errors;
        continue;  // one bad item must not hide the others
      }
      objects.push_back(*std::move(object));
    }
    std::string_view text;
    if (list["metadata"]["resourceVersion"].get(text) == simdjson::SUCCESS) {
      list_version = std::string(text);
    }
    continue_token.clear();
    if (list["metadata"]["continue"].get(text) == simdjson::SUCCESS) {
      continue_token = std::string(text);
    }
    if (continue_token.empty()) break;
  }
  std::vector<Change> changes = store_->Replace(std::move(objects));
  resource_version_ = list_version;
  need_list_ = false;
  MarkSynced();
  if (!changes.empty()) on_change_(std::move(changes));
  return Outcome::kRewatch;
}

Reflector::Outcome Reflector::Watch(bool initial) {
  int64_t min_seconds = absl::ToInt64Seconds(options_.min_watch_timeout);
  int64_t max_seconds = absl::ToInt64Seconds(options_.max_watch_timeout);
  int64_t timeout_seconds =
      absl::Uniform<int64_t>(absl::IntervalClosed, random_, min_seconds, max_seconds);
  std::string path = absl::StrCat(resource_.CollectionPath(options_.namespace_),
                                  "?watch=1&allowWatchBookmarks=true&timeoutSeconds=",
                                  std::max<int64_t>(1, timeout_seconds), QuerySuffix());
  if (initial) {
    absl::StrAppend(&path, "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan");
    resource_version_.clear();  // a consistent snapshot of the current state
  } else {
    absl::StrAppend(&path, "&resourceVersion=", QueryEscape(resource_version_));
  }
  HttpRequest request;
  request.path = std::move(path);

  LineFramer framer;
  simdjson::dom::parser parser;
  std::vector<std::shared_ptr<const CachedObject>> initial_objects;
  bool initial_done = !initial;
  int64_t events = 0;
  Outcome outcome = Outcome::kRewatch;
  std::string stream_error;
  absl::Time start = absl::Now();

  auto on_line = [&](absl::string_view line) -> absl::Status {
    absl::StatusOr<WatchEvent> event = DecodeWatchEvent(line, options_.shape, parser);
    if (!event.ok()) {
      std::unique_lock lock(mu_);
      ++health_.decode_errors;
      stream_error = std::string(event.status().message());
      outcome = Outcome::kRelist;  // after the backoff in Run()'s failure path
      return event.status();
    }
    switch (event->type) {
      case EventType::kBookmark:
        if (!event->resource_version.empty()) resource_version_ = event->resource_version;
        if (!initial_done && event->initial_events_end) {
          initial_done = true;
          need_list_ = false;  // from here on a broken stream is resumed, not relisted
          std::vector<Change> changes = store_->Replace(std::move(initial_objects));
          initial_objects.clear();
          MarkSynced();
          if (!changes.empty()) on_change_(std::move(changes));
        }
        return absl::OkStatus();
      case EventType::kError:
        if (event->error_code == 410) {
          std::unique_lock lock(mu_);
          ++health_.relists_410;
          outcome = Outcome::kRelist;
        } else {
          stream_error = absl::StrCat("watch error ", event->error_code, " ", event->error_reason,
                                      ": ", event->error_message);
          outcome = Outcome::kBackoff;
        }
        return absl::CancelledError("watch error event");
      default:
        ++events;
        if (!event->resource_version.empty()) resource_version_ = event->resource_version;
        if (!initial_done) {
          if (event->type != EventType::kDeleted) initial_objects.push_back(event->object);
          return absl::OkStatus();
        }
        {
          std::vector<Change> changes = store_->Apply(event->type, event->object);
          {
            std::unique_lock lock(mu_);
            ++health_.events;
            health_.resource_version = resource_version_;
          }
          if (!changes.empty()) on_change_(std::move(changes));
        }
        return absl::OkStatus();
    }
  };
  absl::StatusOr<HttpResponse> response = client_.Stream(
      request, [&](absl::string_view bytes) { return framer.Feed(bytes, on_line).ok(); }, &cancel_,
      options_.idle_timeout);
  if (!response.ok()) {
    if (absl::IsDeadlineExceeded(response.status()) && !cancel_.load()) {
      // A silent dead connection: open a new one from where we were.
      return initial_done ? Outcome::kRewatch : Outcome::kRelist;
    }
    return OnTransportError(response.status(), initial ? "watch-list" : "watch");
  }
  if (response->status / 100 != 2) {
    if (initial && (response->status == 400 || response->status == 415 || response->status == 422 ||
                    response->status == 501)) {
      // The server does not support streaming lists: use paginated lists.
      watch_list_supported_ = false;
      return Outcome::kRelist;
    }
    return OnHttpError(*response, initial ? "watch-list" : "watch");
  }
  if (outcome == Outcome::kRelist && !stream_error.empty()) {
    // Invalid JSON: the stream cannot be trusted. Relist, but not in a hot
    // loop if the server keeps sending garbage.
    SetState(ReflectorHealth::State::kFailing,
             absl::StrCat("watch ", resource_.Name(), ": ", stream_error));
    resource_version_.clear();
    return Outcome::kBackoff;
  }
  if (outcome != Outcome::kRewatch) {
    if (outcome == Outcome::kBackoff) {
      SetState(ReflectorHealth::State::kFailing, stream_error);
    } else {
      resource_version_.clear();
    }
    return outcome;
  }
  if (!initial_done) {
    // The stream ended before the initial state was complete: a server that
    // ignores sendInitialEvents never sends the closing bookmark. Fall back
    // to lists.
    watch_list_supported_ = false;
    return Outcome::kRelist;
  }
  if (absl::Now() - start < options_.very_short_watch && events == 0) {
    SetState(ReflectorHealth::State::kFailing,
             absl::StrCat("watch ", resource_.Name(), ": very short watch"));
    return Outcome::kBackoff;
  }
  return Outcome::kRewatch;
}

}  // namespace wm::kube
