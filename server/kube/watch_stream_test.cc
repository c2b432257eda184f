#include "server/kube/watch_stream.h"

#include <simdjson.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::kube {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> FeedInPieces(const std::string& stream, size_t piece) {
  LineFramer framer;
  std::vector<std::string> lines;
  for (size_t i = 0; i < stream.size(); i += piece) {
    absl::Status status =
        framer.Feed(absl::string_view(stream).substr(i, piece), [&](absl::string_view line) {
          lines.emplace_back(line);
          return absl::OkStatus();
        });
    EXPECT_TRUE(status.ok()) << status;
  }
  return lines;
}

TEST(LineFramerTest, EventsSplitAtEveryByteBoundary) {
  const std::string stream = "{\"a\":1}\n{\"b\":2}\r\n\n{\"c\":3}\n";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    EXPECT_THAT(FeedInPieces(stream, piece), ElementsAre("{\"a\":1}", "{\"b\":2}", "{\"c\":3}"))
        << "piece size " << piece;
  }
}

TEST(LineFramerTest, KeepsTrailingPartialLineUntilCompleted) {
  LineFramer framer;
  std::vector<std::string> lines;
  auto collect = [&](absl::string_view line) {
    lines.emplace_back(line);
    return absl::OkStatus();
  };
  ASSERT_TRUE(framer.Feed("{\"a\":1}\n{\"par", collect).ok());
  EXPECT_THAT(lines, ElementsAre("{\"a\":1}"));
  EXPECT_EQ(framer.pending_bytes(), 5u);
  ASSERT_TRUE(framer.Feed("tial\":2}\n", collect).ok());
  EXPECT_THAT(lines, ElementsAre("{\"a\":1}", "{\"partial\":2}"));
  EXPECT_EQ(framer.pending_bytes(), 0u);
}

TEST(LineFramerTest, SixteenMebibyteEventInSmallReads) {
  std::string big =
      "{\"type\":\"ADDED\",\"object\":{\"data\":\"" + std::string(16 << 20, 'x') + "\"}}";
  std::string stream = big + "\n{\"small\":true}\n";
  std::vector<std::string> lines = FeedInPieces(stream, 65536);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].size(), big.size());
  EXPECT_EQ(lines[1], "{\"small\":true}");
}

TEST(LineFramerTest, RejectsLineOverTheLimit) {
  LineFramer framer(/*max_line_bytes=*/10);
  auto ignore = [](absl::string_view) { return absl::OkStatus(); };
  EXPECT_TRUE(framer.Feed("0123456789\n", ignore).ok());
  EXPECT_TRUE(framer.Feed("01234", ignore).ok());
  absl::Status status = framer.Feed("567890123", ignore);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
}

TEST(LineFramerTest, HandlerErrorStopsFeeding) {
  LineFramer framer;
  int calls = 0;
  absl::Status status = framer.Feed("a\nb\nc\n", [&](absl::string_view) {
    ++calls;
    return calls == 2 ? absl::InvalidArgumentError("bad") : absl::OkStatus();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 2);
}

TEST(DecodeWatchEventTest, ObjectEvents) {
  simdjson::dom::parser parser;
  auto event = DecodeWatchEvent(
      R"({"type":"MODIFIED","object":{"kind":"Job","metadata":{"name":"j","namespace":"ns","uid":"u1","resourceVersion":"42","ownerReferences":[{"uid":"owner","kind":"JobSet","name":"js","controller":true}],"managedFields":[{"manager":"x"}],"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","keep":"yes"}},"spec":{"parallelism":2}}})",
      ObjectShape::kFull, parser);
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->type, EventType::kModified);
  EXPECT_EQ(event->resource_version, "42");
  EXPECT_EQ(event->object->key(), "ns/j");
  EXPECT_EQ(event->object->uid(), "u1");
  EXPECT_EQ(event->object->controller_uid(), "owner");
  const Json& document = *event->object->Document();
  EXPECT_FALSE(document["metadata"].contains("managedFields"));
  EXPECT_EQ(document["metadata"]["annotations"], (Json{{"keep", "yes"}}));
  EXPECT_EQ(document["spec"]["parallelism"], 2);
}

TEST(DecodeWatchEventTest, BookmarksAndErrors) {
  simdjson::dom::parser parser;
  auto bookmark = DecodeWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"77","annotations":{"k8s.io/initial-events-end":"true"}}}})",
      ObjectShape::kCompactPod, parser);
  ASSERT_TRUE(bookmark.ok());
  EXPECT_EQ(bookmark->type, EventType::kBookmark);
  EXPECT_EQ(bookmark->resource_version, "77");
  EXPECT_TRUE(bookmark->initial_events_end);
  EXPECT_EQ(bookmark->object, nullptr);

  auto error = DecodeWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 1 vs 5"}})",
      ObjectShape::kFull, parser);
  ASSERT_TRUE(error.ok());
  EXPECT_EQ(error->type, EventType::kError);
  EXPECT_EQ(error->error_code, 410);
  EXPECT_EQ(error->error_reason, "Expired");
}

TEST(DecodeWatchEventTest, MalformedLinesAreErrors) {
  simdjson::dom::parser parser;
  for (const char* line :
       {"{\"type\":\"ADDED\",\"object\":{", "not json", "{\"type\":\"ADDED\"}",
        "{\"type\":\"WHAT\",\"object\":{}}", "{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}"}) {
    EXPECT_EQ(DecodeWatchEvent(line, ObjectShape::kFull, parser).status().code(),
              absl::StatusCode::kInvalidArgument)
        << line;
  }
}

TEST(CompactPodTest, KeepsWhatResolutionReadsAndDropsTheRest) {
  Json pod = Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "9",
      "creationTimestamp": "2026-01-01T00:00:00Z", "generateName": "p-",
      "labels": {"app": "x", "jobset.sigs.k8s.io/replicatedjob-name": "worker"},
      "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}", "a": "b"},
      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "ju", "controller": true}],
      "managedFields": [{"manager": "kubectl"}]},
    "spec": {"nodeName": "n1", "schedulerName": "kai",
      "containers": [{"name": "c", "image": "img", "command": ["run"], "env": [{"name": "A", "value": "1"}],
                      "resources": {"limits": {"nvidia.com/gpu": "4"}}}],
      "initContainers": [{"name": "s", "image": "i", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
      "overhead": {"cpu": "100m"}, "volumes": [{"name": "v"}]},
    "status": {"phase": "Running", "podIP": "10.0.0.1",
      "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "t", "reason": "r"}],
      "containerStatuses": [{"name": "c", "ready": true}]}
  })");
  auto cached = CachedObject::FromJson(pod, ObjectShape::kCompactPod);
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(cached->key(), "ns/p");
  EXPECT_EQ(cached->controller_uid(), "ju");
  Json expected = Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "9",
      "creationTimestamp": "2026-01-01T00:00:00Z",
      "labels": {"app": "x", "jobset.sigs.k8s.io/replicatedjob-name": "worker"},
      "annotations": {"a": "b"},
      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "ju", "controller": true}]},
    "spec": {"nodeName": "n1", "schedulerName": "kai",
      "containers": [{"resources": {"limits": {"nvidia.com/gpu": "4"}}}],
      "initContainers": [{"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
      "overhead": {"cpu": "100m"}},
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "reason": "r"}]}
  })");
  EXPECT_EQ(*cached->Document(), expected);

  // A second pod of the same role shares every fragment but its identity:
  // each counts half of the shared bytes.
  size_t alone = cached->ApproximateBytes();
  pod["metadata"]["name"] = "p2";
  pod["metadata"]["uid"] = "u2";
  auto sibling = CachedObject::FromJson(pod, ObjectShape::kCompactPod);
  EXPECT_LT(sibling->ApproximateBytes(), alone * 3 / 4);
  EXPECT_EQ((*sibling->Document())["metadata"]["name"], "p2");
  EXPECT_EQ((*sibling->Document())["metadata"]["labels"], expected["metadata"]["labels"]);
}

TEST(CompactPodTest, EscapesKeysAndValuesItRewrites) {
  Json pod = {
      {"metadata", {{"name", "p"}, {"annotations", {{"quote\"key", "line\nbreak \\ \x01"}}}}}};
  auto cached = CachedObject::FromJson(pod, ObjectShape::kCompactPod);
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ((*cached->Document())["metadata"]["annotations"]["quote\"key"], "line\nbreak \\ \x01");
}

}  // namespace
}  // namespace wm::kube
