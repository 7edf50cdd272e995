// The throttle of failed logins (injected clock) and the gate both ports log in through.
#include <gtest/gtest.h>

#include <deque>

#include "access/login_gate.h"
#include "access/login_throttle.h"
#include "access/memory_user_store.h"
#include "access/password.h"
#include "sql/mysql_errors.h"

namespace millrace::access {
namespace {

using std::chrono::seconds;

TEST(LoginThrottleTest, FreeFailuresThenADoublingWaitUpToTheCap) {
  ManualClock clock;
  LoginThrottle throttle(&clock, {3, seconds(2), seconds(10), std::chrono::minutes(15), 100});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(throttle.Wait("10.0.0.1"), seconds(0));
    throttle.RecordFailure("10.0.0.1");
  }
  EXPECT_EQ(throttle.Wait("10.0.0.1"), seconds(0)) << "three failures are free";
  const std::vector<seconds> expected = {seconds(2), seconds(4), seconds(8), seconds(10),
                                         seconds(10)};
  for (seconds wait : expected) {
    throttle.RecordFailure("10.0.0.1");
    EXPECT_EQ(throttle.Wait("10.0.0.1"), wait);
    EXPECT_EQ(throttle.Wait("10.0.0.2"), seconds(0)) << "other addresses are not slowed";
    clock.Advance(wait - std::chrono::milliseconds(500));
    EXPECT_EQ(throttle.Wait("10.0.0.1"), seconds(1)) << "rounded up";
    clock.Advance(std::chrono::milliseconds(500));
    EXPECT_EQ(throttle.Wait("10.0.0.1"), seconds(0));
  }
}

TEST(LoginThrottleTest, SuccessAndTimeForgetFailures) {
  ManualClock clock;
  LoginThrottle throttle(&clock, {1, seconds(1), seconds(60), std::chrono::minutes(15), 100});
  throttle.RecordFailure("a");
  throttle.RecordFailure("a");
  EXPECT_EQ(throttle.Wait("a"), seconds(1));
  throttle.RecordSuccess("a");
  EXPECT_EQ(throttle.Wait("a"), seconds(0));
  throttle.RecordFailure("a");
  EXPECT_EQ(throttle.Wait("a"), seconds(0)) << "counting starts afresh after a success";

  throttle.RecordFailure("b");
  clock.Advance(std::chrono::minutes(15));
  throttle.RecordFailure("c");  // prunes what is 15 minutes old
  throttle.RecordFailure("b");
  EXPECT_EQ(throttle.Wait("b"), seconds(0)) << "b's first failure was forgotten";
}

TEST(LoginThrottleTest, TrackedAddressesAreBounded) {
  ManualClock clock;
  LoginThrottle throttle(&clock, {0, seconds(5), seconds(60), std::chrono::minutes(15), 3});
  for (const char* address : {"a", "b", "c", "d"}) {
    throttle.RecordFailure(address);
    clock.Advance(seconds(1));
  }
  EXPECT_EQ(throttle.Wait("a"), seconds(0)) << "the oldest was dropped to make room";
  EXPECT_GT(throttle.Wait("d"), seconds(0));
  EXPECT_GT(throttle.Wait("b"), seconds(0));
}

class MemoryAuditStore final : public AuditStore {
 public:
  Status AppendAudit(const AuditEvent& event, int64_t keep) override {
    events_.push_front(event);
    while (static_cast<int64_t>(events_.size()) > keep)
      events_.pop_back();
    return Status::Ok();
  }
  Result<std::vector<AuditEvent>> LoadAudit(int64_t limit) override {
    return std::vector<AuditEvent>(events_.begin(),
                                   events_.begin() + std::min<int64_t>(limit, events_.size()));
  }

 private:
  std::deque<AuditEvent> events_;
};

class LoginGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UserChange change;
    change.password_hash = NativePasswordHash("ann-pw");
    ASSERT_TRUE(access_.CreateUser(UserIdentity{"ann", std::nullopt}, change, false).ok());
  }

  ManualClock clock_;
  MemoryUserStore users_;
  MemoryAuditStore events_;
  AccessControl access_{&users_, "root-pw"};
  LoginThrottle throttle_{&clock_, {2, seconds(4), seconds(60), std::chrono::minutes(15), 100}};
  AuditLog audit_{&events_, &clock_};
  LoginGate gate_{&access_, &throttle_, &audit_};
};

TEST_F(LoginGateTest, BothPortsShareOneThrottleAndEveryAttemptIsAudited) {
  constexpr std::string_view kScramble = "abcdefghij0123456789";
  EXPECT_TRUE(gate_.CheckPassword("ann", "10.0.0.9", "ann-pw", false).ok());
  EXPECT_TRUE(gate_
                  .CheckScramble("root", "10.0.0.9", kScramble,
                                 NativePasswordResponse("root-pw", kScramble), false)
                  .ok());
  // Three wrong passwords, over HTTP and MySQL: the third one is past the free two.
  EXPECT_EQ(gate_.CheckPassword("ann", "10.0.0.9", "guess-1", false).code(),
            StatusCode::kPermissionDenied);
  EXPECT_FALSE(gate_
                   .CheckScramble("root", "10.0.0.9", kScramble,
                                  NativePasswordResponse("guess-2", kScramble), false)
                   .ok());
  EXPECT_FALSE(gate_.CheckPassword("root", "10.0.0.9", "guess-3", false).ok());
  EXPECT_EQ(gate_.RetryAfter("10.0.0.9"), seconds(4));
  // Now even the right password is refused, unchecked, saying how long to wait.
  Status refused = gate_.CheckPassword("ann", "10.0.0.9", "ann-pw", false);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(sql::ClassifyError(refused).code, 1045);
  EXPECT_EQ(refused.message(),
            "Access denied for user 'ann'@'10.0.0.9': too many failed logins from 10.0.0.9; try "
            "again in 4 seconds");
  EXPECT_EQ(gate_.RetryAfter("10.0.0.9"), seconds(8)) << "trying while waiting doubles the wait";
  EXPECT_TRUE(gate_.CheckPassword("ann", "10.0.0.8", "ann-pw", false).ok()) << "other address";
  clock_.Advance(seconds(8));
  EXPECT_TRUE(gate_.CheckPassword("ann", "10.0.0.9", "ann-pw", false).ok());
  EXPECT_EQ(gate_.RetryAfter("10.0.0.9"), seconds(0));

  auto events = audit_.Newest();
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 8u);
  int failures = 0;
  for (const AuditEvent& event : *events) {
    EXPECT_EQ(event.kind, "LOGIN");
    EXPECT_EQ(event.error.find("guess"), std::string::npos) << "no password in the log";
    EXPECT_EQ(event.error.find("pw"), std::string::npos);
    if (!event.error.empty()) ++failures;
  }
  EXPECT_EQ(failures, 4);
  EXPECT_NE((*events)[2].error.find("too many failed logins"), std::string::npos);
}

}  // namespace
}  // namespace millrace::access
