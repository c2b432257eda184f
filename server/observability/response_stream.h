#ifndef WM_SERVER_OBSERVABILITY_RESPONSE_STREAM_H_
#define WM_SERVER_OBSERVABILITY_RESPONSE_STREAM_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wm::observability {

// The body of an HttpServer response that is written over time (a stream of
// server-sent events): a producer on any thread queues bytes, the server's
// I/O thread sends them as the client reads. The queue is bounded: a client
// that leaves more than `max_queued_bytes` unread is disconnected rather
// than let the daemon's memory grow (a server-sent-events client then
// reconnects and resumes from its last event id).
//
// Thread-safe. The producer's side is Write, Finish and SetOnClose; the
// server's side (Take, Close) is HttpServer's own.
class ResponseStream {
 public:
  // `wake` is called (under the stream's lock, so it must not block or call
  // back) when bytes are queued into an empty queue or the stream finishes.
  ResponseStream(size_t max_queued_bytes, std::function<void()> wake);
  ResponseStream(const ResponseStream&) = delete;
  ResponseStream& operator=(const ResponseStream&) = delete;

  // Queues `bytes`. False, and nothing queued, once the stream is closed or
  // finished; queuing past the bound closes it (and answers false). A
  // producer stops at the first false.
  bool Write(absl::string_view bytes);
  // Like Write, but a producer that has all its bytes at hand (a scrape
  // rendered in chunks) waits for the client to make room instead of
  // overflowing: up to `timeout` for each chunk, after which the stream
  // closes. REQUIRES: bytes.size() <= max_queued_bytes; the producer runs
  // on the thread HttpServer called it on, or its own.
  bool WriteWait(absl::string_view bytes, absl::Duration timeout);
  // Ends the response once what is queued is sent. Further writes fail.
  void Finish();
  // Runs `on_close` once when the connection ends for any reason (the
  // client went away or was too slow, the response finished, the server
  // stopped): at once, on this thread, if it has ended already; else later
  // on the server's I/O thread, so it must be quick and must not block
  // (cancel the producer, do not wait for it).
  void SetOnClose(std::function<void()> on_close);
  bool closed() const;

  // For HttpServer. Moves the queued bytes to the end of `*out`; `finished`
  // says Finish was called (and everything is now taken), `overflowed`
  // that the client fell too far behind.
  struct Taken {
    bool finished = false;
    bool overflowed = false;
  };
  Taken Take(std::string* out);
  // For HttpServer: the connection is gone; runs on_close (once).
  void Close();

 private:
  // Queues `bytes`, or overflows (closing the stream) when they do not fit.
  // REQUIRES: mu_ held.
  bool QueueLocked(absl::string_view bytes);

  const size_t max_queued_bytes_;
  const std::function<void()> wake_;
  mutable std::mutex mu_;
  // Signalled when the queue is taken or the stream closes (WriteWait).
  std::condition_variable room_;
  std::string queued_;
  bool finished_ = false;
  bool overflowed_ = false;
  bool closed_ = false;
  std::function<void()> on_close_;
};

}  // namespace wm::observability

#endif  // WM_SERVER_OBSERVABILITY_RESPONSE_STREAM_H_
