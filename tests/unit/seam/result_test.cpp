// SPDX-License-Identifier: Apache-2.0
// Result<T>: the error code, value() throwing the seam's error, and the monadic chain.
#include "dsh/sandbox/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace dsh::sandbox {
namespace {

Result<int> parse_digit(const std::string& text) {
  if (text.size() != 1 || text[0] < '0' || text[0] > '9') {
    return InvalidInput{"\"" + text + "\" is not a digit", ErrorCode::kMalformed};
  }
  return text[0] - '0';
}

Result<int> positive(int value) {
  if (value == 0) return InvalidInput{"0 is not positive"};
  return value;
}

TEST(Result, AnErrorCarriesItsCodeAndMessage) {
  const Result<int> bad = parse_digit("x");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_code(), ErrorCode::kMalformed);
  EXPECT_EQ(bad.error().message, "\"x\" is not a digit");
  EXPECT_EQ(error_code_name(bad.error_code()), "malformed");
}

TEST(Result, ABareMessageIsAnInvalidArgument) {
  const InvalidInput error{"bad"};
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  const Result<void> check = error;
  EXPECT_EQ(check.error_code(), ErrorCode::kInvalidArgument);
}

TEST(Result, ValueOnAnErrorThrowsTheSeamsInvalidInputError) {
  const Result<int> bad = parse_digit("");
  EXPECT_THROW((void)bad.value(), InvalidSandboxInputError);
  const Result<void> failed = InvalidInput{"no"};
  EXPECT_THROW(failed.value(), InvalidSandboxInputError);
}

TEST(Result, AndThenChainsChecksAndStopsAtTheFirstError) {
  int calls = 0;
  const auto count = [&calls](int value) -> Result<int> {
    ++calls;
    return positive(value);
  };
  const Result<int> ok = parse_digit("7").and_then(count);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok.value(), 7);
  EXPECT_EQ(calls, 1);

  const Result<int> zero = parse_digit("0").and_then(count);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "0 is not positive");
  EXPECT_EQ(calls, 2);

  const Result<int> early = parse_digit("a").and_then(count);
  ASSERT_FALSE(early);
  EXPECT_EQ(early.error_code(), ErrorCode::kMalformed);
  EXPECT_EQ(calls, 2) << "a step after an error must not run";
}

TEST(Result, TransformMapsTheValueAndPassesAnErrorThrough) {
  const Result<std::string> doubled =
      parse_digit("4").transform([](int value) { return std::to_string(value * 2); });
  ASSERT_TRUE(doubled);
  EXPECT_EQ(doubled.value(), "8");
  const Result<std::string> failed =
      parse_digit("?").transform([](int value) { return std::to_string(value); });
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error_code(), ErrorCode::kMalformed);
}

TEST(Result, TransformToVoidAndFromVoid) {
  int seen = 0;
  const Result<void> done = parse_digit("3").transform([&seen](int value) { seen = value; });
  EXPECT_TRUE(done);
  EXPECT_EQ(seen, 3);
  const Result<int> made = Result<void>().transform([] { return 5; });
  ASSERT_TRUE(made);
  EXPECT_EQ(made.value(), 5);
  const Result<int> skipped =
      Result<void>(InvalidInput{"first", ErrorCode::kNotFound}).and_then([] {
        return Result<int>(1);
      });
  ASSERT_FALSE(skipped);
  EXPECT_EQ(skipped.error_code(), ErrorCode::kNotFound);
}

TEST(Result, MovedChainsKeepMoveOnlyValues) {
  Result<std::unique_ptr<int>> owned = std::make_unique<int>(9);
  const Result<int> read =
      std::move(owned).and_then([](std::unique_ptr<int> p) -> Result<int> { return *p; });
  ASSERT_TRUE(read);
  EXPECT_EQ(read.value(), 9);
}

TEST(Result, TransformErrorAddsContextAndKeepsTheCode) {
  const Result<int> bad = parse_digit("x").transform_error([](InvalidInput error) {
    error.message = "config: " + error.message;
    return error;
  });
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "config: \"x\" is not a digit");
  EXPECT_EQ(bad.error_code(), ErrorCode::kMalformed);
  const Result<int> good = parse_digit("1").transform_error([](InvalidInput error) {
    error.message = "unused";
    return error;
  });
  EXPECT_EQ(good.value(), 1);
}

TEST(Result, OrElseRecovers) {
  const Result<int> recovered =
      parse_digit("x").or_else([](const InvalidInput&) -> Result<int> { return 0; });
  EXPECT_EQ(recovered.value(), 0);
  EXPECT_EQ(parse_digit("x").value_or(-1), -1);
  EXPECT_EQ(parse_digit("2").value_or(-1), 2);
}

}  // namespace
}  // namespace dsh::sandbox
