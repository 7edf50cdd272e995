// mysql_native_password: the hash MySQL's PASSWORD() printed, and the check of a client's
// answer to a scramble.
#include "access/password.h"

#include <gtest/gtest.h>

namespace millrace::access {
namespace {

constexpr std::string_view kScramble = "abcdefghij0123456789";

TEST(PasswordTest, TheHashIsMySqlsPasswordFunction) {
  // SELECT PASSWORD('password') in MySQL 5.7.
  EXPECT_EQ(NativeHashText(NativePasswordHash("password")),
            "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19");
  EXPECT_EQ(NativePasswordHash("password").size(), kNativeHashLength);
  EXPECT_EQ(NativePasswordHash(""), "");
  EXPECT_EQ(NativeHashText(""), "");
}

TEST(PasswordTest, TheTextFormParsesBack) {
  const std::string hash = NativePasswordHash("s3cret");
  EXPECT_EQ(ParseNativeHashText(NativeHashText(hash)).value(), hash);
  EXPECT_EQ(ParseNativeHashText("*2470c0c06dee42fd1618bb99005adca2ec9d1e19").value(),
            NativePasswordHash("password"));
  EXPECT_EQ(ParseNativeHashText("").value(), "");
  for (std::string_view bad : {"2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19",    // no '*'
                               "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E1",    // too short
                               "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19A",  // too long
                               "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1EZZ", "hunter2x"}) {
    auto parsed = ParseNativeHashText(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message().find(bad), std::string::npos);
  }
}

TEST(PasswordTest, OnlyTheRightPasswordAnswersTheScramble) {
  const std::string stored = NativePasswordHash("s3cret");
  const std::string answer = NativePasswordResponse("s3cret", kScramble);
  EXPECT_EQ(answer.size(), kNativeHashLength);
  EXPECT_TRUE(VerifyNativeResponse(stored, kScramble, answer));
  EXPECT_FALSE(
      VerifyNativeResponse(stored, kScramble, NativePasswordResponse("s3creT", kScramble)));
  // An answer to another scramble is not an answer to this one (no replay).
  EXPECT_FALSE(VerifyNativeResponse(stored, "01234567890123456789", answer));
  EXPECT_FALSE(VerifyNativeResponse(stored, kScramble, ""));
  EXPECT_FALSE(VerifyNativeResponse(stored, kScramble, answer.substr(1)));
  // The stored hash itself is not an answer.
  EXPECT_FALSE(VerifyNativeResponse(stored, kScramble, stored));
  // The answer holds neither the password nor its SHA1 in the clear.
  EXPECT_EQ(answer.find("s3cret"), std::string::npos);
}

TEST(PasswordTest, NoPasswordIsAnsweredByNothing) {
  EXPECT_EQ(NativePasswordResponse("", kScramble), "");
  EXPECT_TRUE(VerifyNativeResponse("", kScramble, ""));
  EXPECT_FALSE(VerifyNativeResponse("", kScramble, NativePasswordResponse("x", kScramble)));
  EXPECT_FALSE(VerifyNativeResponse(NativePasswordHash("x"), kScramble, ""));
}

// The answer a client computes for "password" and this scramble (Python's hashlib: SHA1(pw) XOR
// SHA1(scramble + SHA1(SHA1(pw)))), checked against the stored hash.
TEST(PasswordTest, AKnownAnswerVerifies) {
  std::string answer;
  for (const char* hex = "d50c544a7ecd39e014d6655e6409f921b1a8fd78"; *hex != '\0'; hex += 2)
    answer += static_cast<char>(std::stoi(std::string(hex, 2), nullptr, 16));
  EXPECT_EQ(NativePasswordResponse("password", kScramble), answer);
  EXPECT_TRUE(VerifyNativeResponse(
      ParseNativeHashText("*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19").value(), kScramble, answer));
}

}  // namespace
}  // namespace millrace::access
