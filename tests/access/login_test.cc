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

LoginThrottleOptions Options(int per_user, int per_address, size_t entries = 100) {
  return {per_user, per_address, seconds(2), seconds(10), std::chrono::minutes(15), entries};
}

// A failed attempt: begun and not succeeded.
LoginAttempt Fail(LoginThrottle& throttle, std::string_view address, std::string_view user) {
  return throttle.Begin(address, user);
}

TEST(LoginThrottleTest, FreeFailuresThenADoublingWaitUpToTheCap) {
  ManualClock clock;
  LoginThrottle throttle(&clock, Options(3, 100));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Fail(throttle, "10.0.0.1", "root").wait, seconds(0));
  }
  EXPECT_EQ(throttle.Wait("10.0.0.1", "root"), seconds(0)) << "three failures are free";
  const std::vector<seconds> expected = {seconds(2), seconds(4), seconds(8), seconds(10),
                                         seconds(10)};
  for (seconds wait : expected) {
    EXPECT_EQ(Fail(throttle, "10.0.0.1", "root").wait, seconds(0)) << "checked";
    EXPECT_EQ(throttle.Wait("10.0.0.1", "root"), wait);
    EXPECT_EQ(throttle.Wait("10.0.0.2", "root"), seconds(0)) << "other addresses are not slowed";
    EXPECT_EQ(throttle.Wait("10.0.0.1", "ann"), seconds(0)) << "nor other users";
    clock.Advance(wait - std::chrono::milliseconds(500));
    EXPECT_EQ(throttle.Wait("10.0.0.1", "root"), seconds(1)) << "rounded up";
    clock.Advance(std::chrono::milliseconds(500));
  }
}

TEST(LoginThrottleTest, TryingWhileWaitingIsRefusedAndLengthensTheWait) {
  ManualClock clock;
  LoginThrottle throttle(&clock, Options(1, 100));
  Fail(throttle, "a", "root");
  Fail(throttle, "a", "root");
  EXPECT_EQ(throttle.Wait("a", "root"), seconds(2));
  const LoginAttempt first = throttle.Begin("a", "root");
  EXPECT_EQ(first.wait, seconds(4));
  EXPECT_TRUE(first.first_refusal);
  const LoginAttempt second = throttle.Begin("a", "root");
  EXPECT_EQ(second.wait, seconds(8));
  EXPECT_FALSE(second.first_refusal) << "one record per wait is enough";
  clock.Advance(seconds(8));
  EXPECT_EQ(throttle.Begin("a", "root").wait, seconds(0));  // checked (and failed)
  EXPECT_TRUE(throttle.Begin("a", "root").first_refusal) << "a new wait is recorded again";
}

TEST(LoginThrottleTest, ASuccessClearsOnlyItsOwnUser) {
  ManualClock clock;
  LoginThrottle throttle(&clock, Options(2, 5));
  Fail(throttle, "a", "root");
  Fail(throttle, "a", "root");
  Fail(throttle, "a", "root");
  EXPECT_EQ(throttle.Wait("a", "root"), seconds(2));
  // Another account's good password from the same address does not reset root's count.
  EXPECT_EQ(throttle.Begin("a", "ann").wait, seconds(0));
  throttle.Succeeded("a", "ann");
  EXPECT_EQ(throttle.Wait("a", "root"), seconds(2));
  clock.Advance(seconds(2));
  EXPECT_EQ(throttle.Begin("a", "root").wait, seconds(0));
  throttle.Succeeded("a", "root");
  EXPECT_EQ(throttle.Wait("a", "root"), seconds(0));
  EXPECT_EQ(Fail(throttle, "a", "root").wait, seconds(0)) << "root counts afresh";
}

TEST(LoginThrottleTest, ManyUsersFromOneAddressAreSlowedToo) {
  ManualClock clock;
  LoginThrottle throttle(&clock, Options(5, 4));
  for (const char* user : {"u1", "u2", "u3", "u4"}) {
    EXPECT_EQ(Fail(throttle, "b", user).wait, seconds(0));
  }
  EXPECT_EQ(Fail(throttle, "b", "u5").wait, seconds(0));  // the fifth, checked, starts a wait
  EXPECT_EQ(throttle.Wait("b", "u6"), seconds(2)) << "the address's budget is spent";
  EXPECT_EQ(throttle.Wait("c", "u6"), seconds(0));
}

TEST(LoginThrottleTest, ConcurrentAttemptsCannotShareAFreeSlot) {
  ManualClock clock;
  LoginThrottle throttle(&clock, Options(2, 100));
  // Three attempts begin before any ends: the third already counts two failures in flight.
  EXPECT_EQ(throttle.Begin("a", "root").wait, seconds(0));
  EXPECT_EQ(throttle.Begin("a", "root").wait, seconds(0));
  EXPECT_EQ(throttle.Begin("a", "root").wait, seconds(0));
  EXPECT_GT(throttle.Begin("a", "root").wait, seconds(0));
}

TEST(LoginThrottleTest, AddressesCountAsTheirNetwork) {
  EXPECT_EQ(LoginThrottle::AddressKey("2001:db8:1:2:aaaa::1"), "2001:0db8:0001:0002::/64");
  EXPECT_EQ(LoginThrottle::AddressKey("2001:db8:1:2:bbbb::9"), "2001:0db8:0001:0002::/64");
  EXPECT_EQ(LoginThrottle::AddressKey("::ffff:10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(LoginThrottle::AddressKey("10.1.2.3"), "10.1.2.3");
  ManualClock clock;
  LoginThrottle throttle(&clock, Options(1, 100));
  Fail(throttle, "2001:db8::1", "root");
  Fail(throttle, "2001:db8::2", "root");
  EXPECT_GT(throttle.Wait("2001:db8::3", "root"), seconds(0));
}

TEST(LoginThrottleTest, TimeForgetsAndMemoryIsBounded) {
  ManualClock clock;
  LoginThrottle throttle(&clock, Options(1, 100, 4));
  Fail(throttle, "b", "root");
  clock.Advance(std::chrono::minutes(15));
  Fail(throttle, "c", "root");  // prunes what is 15 minutes old
  Fail(throttle, "b", "root");
  EXPECT_EQ(throttle.Wait("b", "root"), seconds(0)) << "b's first failure was forgotten";
  for (const char* address : {"d", "e", "f"}) {
    Fail(throttle, address, "root");
    Fail(throttle, address, "root");
    clock.Advance(seconds(1));
  }
  EXPECT_EQ(throttle.Wait("d", "root"), seconds(0)) << "the oldest made room";
  EXPECT_GT(throttle.Wait("f", "root"), seconds(0));
}

class MemoryAuditStore final : public AuditStore {
 public:
  Status AppendAudit(const AuditEvent& event, int64_t keep) override {
    events_.push_front(event);
    events_.front().seq = ++last_seq_;
    while (static_cast<int64_t>(events_.size()) > keep)
      events_.pop_back();
    return Status::Ok();
  }
  Result<std::vector<AuditEvent>> LoadAudit(int64_t limit, int64_t before) override {
    std::vector<AuditEvent> page;
    for (const AuditEvent& e : events_) {
      if (e.seq < before && static_cast<int64_t>(page.size()) < limit) page.push_back(e);
    }
    return page;
  }

 private:
  std::deque<AuditEvent> events_;
  int64_t last_seq_ = 0;
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
  LoginThrottle throttle_{&clock_, {2, 20, seconds(8), seconds(60), std::chrono::minutes(15), 100}};
  AuditLog audit_{&events_, &clock_};
  LoginGate gate_{&access_, &throttle_, &audit_};
};

TEST_F(LoginGateTest, BothPortsShareOneThrottleAndEveryCheckedAttemptIsAudited) {
  constexpr std::string_view kScramble = "abcdefghij0123456789";
  EXPECT_TRUE(gate_.CheckPassword("ann", "10.0.0.9", "ann-pw", false).status.ok());
  EXPECT_TRUE(gate_
                  .CheckScramble("root", "10.0.0.9", kScramble,
                                 NativePasswordResponse("root-pw", kScramble), false)
                  .status.ok());
  // Three wrong root passwords, over HTTP and MySQL: the third one is past the free two.
  EXPECT_EQ(gate_.CheckPassword("root", "10.0.0.9", "guess-1", false).status.code(),
            StatusCode::kPermissionDenied);
  EXPECT_FALSE(gate_
                   .CheckScramble("root", "10.0.0.9", kScramble,
                                  NativePasswordResponse("guess-2", kScramble), false)
                   .status.ok());
  const LoginOutcome third = gate_.CheckPassword("root", "10.0.0.9", "guess-3", false);
  EXPECT_EQ(third.status.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(third.retry_after, seconds(0)) << "checked, so not a throttled refusal";
  // Now even the right password is refused, unchecked, saying how long to wait.
  const LoginOutcome refused = gate_.CheckPassword("root", "10.0.0.9", "root-pw", false);
  EXPECT_EQ(refused.status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(sql::ClassifyError(refused.status).code, 1045);
  // The wait counts this attempt: 8 s after the third failure, 16 s after this one.
  EXPECT_EQ(refused.retry_after, seconds(16));
  EXPECT_EQ(refused.status.message(),
            "Access denied for user 'root'@'10.0.0.9': too many failed logins from 10.0.0.9; try "
            "again in 16 seconds");
  EXPECT_EQ(gate_.CheckPassword("root", "10.0.0.9", "root-pw", false).retry_after, seconds(32));
  // ann, from the same address, is not held up, and her login does not free root.
  EXPECT_TRUE(gate_.CheckPassword("ann", "10.0.0.9", "ann-pw", false).status.ok());
  EXPECT_FALSE(gate_.CheckPassword("root", "10.0.0.9", "root-pw", false).status.ok());
  EXPECT_TRUE(gate_.CheckPassword("root", "10.0.0.8", "root-pw", false).status.ok());
  clock_.Advance(seconds(60));
  EXPECT_TRUE(gate_.CheckPassword("root", "10.0.0.9", "root-pw", false).status.ok());

  auto events = audit_.Newest();
  ASSERT_TRUE(events.ok());
  // Eight checked attempts; of the three refusals while root waited, the first, and the first
  // after ann's checked login (at most one record per checked attempt at the address).
  ASSERT_EQ(events->size(), 10u);
  int failures = 0;
  int waits = 0;
  for (const AuditEvent& event : *events) {
    EXPECT_EQ(event.kind, "LOGIN");
    EXPECT_EQ(event.error.find("guess"), std::string::npos) << "no password in the log";
    EXPECT_EQ(event.error.find("pw"), std::string::npos);
    if (!event.error.empty()) ++failures;
    if (event.error.find("too many failed logins") != std::string::npos) {
      ++waits;
      EXPECT_NE(event.error.find("further refusals while it waits are not recorded"),
                std::string::npos);
    }
  }
  EXPECT_EQ(failures, 5);
  EXPECT_EQ(waits, 2);
}

}  // namespace
}  // namespace millrace::access
