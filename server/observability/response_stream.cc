#include "server/observability/response_stream.h"

#include <utility>

namespace wm::observability {

ResponseStream::ResponseStream(size_t max_queued_bytes, std::function<void()> wake)
    : max_queued_bytes_(max_queued_bytes), wake_(std::move(wake)) {}

bool ResponseStream::Write(absl::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  return QueueLocked(bytes);
}

bool ResponseStream::WriteWait(absl::string_view bytes, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  // Past the timeout without room, QueueLocked cuts the client as Write would.
  room_.wait_for(lock, absl::ToChronoMilliseconds(timeout), [&] {
    return closed_ || finished_ || overflowed_ ||
           queued_.size() + bytes.size() <= max_queued_bytes_;
  });
  return QueueLocked(bytes);
}

bool ResponseStream::QueueLocked(absl::string_view bytes) {
  if (closed_ || finished_ || overflowed_) return false;
  if (queued_.size() + bytes.size() > max_queued_bytes_) {
    // The server resets the connection when it next looks.
    overflowed_ = true;
    queued_.clear();
    wake_();
    return false;
  }
  bool was_empty = queued_.empty();
  queued_.append(bytes.data(), bytes.size());
  if (was_empty) wake_();
  return true;
}

void ResponseStream::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || finished_) return;
  finished_ = true;
  wake_();
}

void ResponseStream::SetOnClose(std::function<void()> on_close) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      on_close_ = std::move(on_close);
      return;
    }
  }
  on_close();
}

bool ResponseStream::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_ || overflowed_;
}

ResponseStream::Taken ResponseStream::Take(std::string* out) {
  std::lock_guard<std::mutex> lock(mu_);
  out->append(queued_);
  queued_.clear();
  room_.notify_all();
  return Taken{finished_, overflowed_};
}

void ResponseStream::Close() {
  std::function<void()> on_close;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    queued_.clear();
    on_close = std::move(on_close_);
  }
  room_.notify_all();
  if (on_close) on_close();
}

}  // namespace wm::observability
