#include "server/common/quantity.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace wm {
namespace {

int64_t Milli(const char* text) {
  auto q = ParseQuantity(text);
  EXPECT_TRUE(q.ok()) << text;
  return q.ok() ? q->milli : -1;
}

TEST(QuantityTest, ParsesKubernetesForms) {
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Milli("2"), 2000);
  EXPECT_EQ(Milli("1.5"), 1500);
  EXPECT_EQ(Milli("16Gi"), (int64_t{16} << 30) * 1000);
  EXPECT_EQ(Milli("70M"), int64_t{70000000} * 1000);
  EXPECT_EQ(Milli("1e3"), 1000 * 1000);
  EXPECT_EQ(Milli("100n"), 1);  // rounded up to the next milli
  EXPECT_EQ(Milli("0"), 0);
  EXPECT_EQ(Milli("+4"), 4000);
  EXPECT_FALSE(ParseQuantity("abc").ok());
  EXPECT_FALSE(ParseQuantity("1Qi").ok());
  EXPECT_FALSE(ParseQuantity("").ok());
}

TEST(QuantityTest, RangeIsInt64Thousandths) {
  EXPECT_EQ(Milli("9223372036854775807m"), INT64_MAX);
  EXPECT_EQ(Milli("-9223372036854775807m"), -INT64_MAX);
  EXPECT_EQ(Milli("8Pi"), (int64_t{8} << 50) * 1000);
  EXPECT_EQ(Milli("1e-30"), 1);  // far below a milli still rounds up
  EXPECT_EQ(Milli("0e400"), 0);
  EXPECT_EQ(Milli("0.000000000000000000001Ki"), 1);
  const std::string kBound = " is out of range (at most 9223372036854775807m, about 9.2e15 units)";
  for (const char* text : {"9223372036854775808m", "1e400", "999Ei", "8Ei", "10P", "-1e19",
                           "99999999999999999999999999999999999999", "1e16"}) {
    auto q = ParseQuantity(text);
    ASSERT_FALSE(q.ok()) << text << " gave " << q->milli;
    EXPECT_EQ(q.status().message(), absl::StrCat("quantity \"", text, "\"", kBound));
  }
}

// Whole numbers up to 15 digits take a shortcut; at every length it gives
// what the general path gives for the same number written as a decimal.
TEST(QuantityTest, WholeNumbersParseAsTheirDecimalForm) {
  std::string digits;
  for (int length = 1; length <= 16; ++length) {  // 17 digits pass 9.2e15 units
    digits += static_cast<char>('0' + (length * 7) % 10);
    EXPECT_EQ(Milli(digits.c_str()), Milli((digits + ".0").c_str())) << digits;
  }
  EXPECT_EQ(Milli("007"), 7000);
  EXPECT_EQ(Milli("999999999999999"), int64_t{999999999999999} * 1000);
}

TEST(QuantityTest, UnitsRoundUpAwayFromZero) {
  EXPECT_EQ((Quantity{1}).Units(), 1);
  EXPECT_EQ((Quantity{1000}).Units(), 1);
  EXPECT_EQ((Quantity{1001}).Units(), 2);
  EXPECT_EQ((Quantity{0}).Units(), 0);
  EXPECT_EQ((Quantity{-1}).Units(), 0);
  EXPECT_EQ((Quantity{-1001}).Units(), -1);
  EXPECT_EQ((Quantity{INT64_MAX}).Units(), INT64_MAX / 1000 + 1);
  EXPECT_EQ((Quantity{-INT64_MAX}).Units(), -(INT64_MAX / 1000));
}

TEST(QuantityTest, ReportsAndFormats) {
  EXPECT_EQ(ReportedValue("cpu", *ParseQuantity("250m")), 250);
  EXPECT_EQ(ReportedValue("memory", *ParseQuantity("1.5Ki")), 1536);
  EXPECT_EQ(ReportedValue("nvidia.com/gpu", *ParseQuantity("4")), 4);
  EXPECT_EQ(FormatReported("cpu", 20000), "20");
  EXPECT_EQ(FormatReported("cpu", 250), "250m");
  EXPECT_EQ(FormatReported("memory", int64_t{16} << 30), "16Gi");
  EXPECT_EQ(FormatReported("memory", 70000000), "70M");
  EXPECT_EQ(FormatReported("nvidia.com/gpu", 12), "12");
}

}  // namespace
}  // namespace wm
