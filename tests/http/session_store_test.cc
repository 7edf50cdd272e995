#include "http/session_store.h"

#include <gtest/gtest.h>

namespace millrace::http {
namespace {

TEST(SessionStoreTest, SessionsHaveFreshTokensAndEndWhenIdleOrDropped) {
  ManualClock clock;
  SessionStore store(&clock, {std::chrono::seconds(60), 100, 100});
  const HttpSession a = store.Create("ann", "s");
  const HttpSession b = store.Create("ann", "s");
  EXPECT_EQ(a.id.size(), 64u);
  EXPECT_NE(a.id, b.id);
  EXPECT_NE(a.csrf_token, b.csrf_token);
  EXPECT_NE(a.id, a.csrf_token);
  ASSERT_TRUE(store.Find(a.id));
  EXPECT_EQ(store.Find(a.id)->csrf_token, a.csrf_token);
  EXPECT_FALSE(store.Find(a.csrf_token)) << "the CSRF token is not a session id";
  clock.Advance(std::chrono::seconds(59));
  EXPECT_TRUE(store.Find(a.id));  // and counts as use
  clock.Advance(std::chrono::seconds(59));
  EXPECT_TRUE(store.Find(a.id));
  EXPECT_FALSE(store.Find(b.id)) << "unused for 118 s";
  store.Drop(a.id);
  EXPECT_FALSE(store.Find(a.id));
}

TEST(SessionStoreTest, OneUserHoldsAtMostItsShareOfSessions) {
  ManualClock clock;
  SessionStore store(&clock, {std::chrono::hours(1), 100, 2});
  const HttpSession other = store.Create("bob", "s");
  const HttpSession a1 = store.Create("ann", "s");
  clock.Advance(std::chrono::seconds(1));
  const HttpSession a2 = store.Create("ann", "s");
  clock.Advance(std::chrono::seconds(1));
  const HttpSession a3 = store.Create("ann", "s");
  EXPECT_FALSE(store.Find(a1.id)) << "ann's oldest made room for ann's newest";
  EXPECT_TRUE(store.Find(a2.id));
  EXPECT_TRUE(store.Find(a3.id));
  EXPECT_TRUE(store.Find(other.id)) << "nobody else's session went";
  EXPECT_EQ(store.Find(a3.id)->stamp, "s");
}

TEST(SessionStoreTest, TheLeastRecentlyUsedSessionMakesRoomWhenFull) {
  ManualClock clock;
  SessionStore store(&clock, {std::chrono::hours(1), 3, 3});
  std::vector<HttpSession> sessions;
  for (int i = 0; i < 3; ++i) {
    sessions.push_back(store.Create("u" + std::to_string(i), "s"));
    clock.Advance(std::chrono::seconds(1));
  }
  ASSERT_TRUE(store.Find(sessions[0].id));  // now the most recently used
  store.Create("u3", "s");
  EXPECT_EQ(store.size(), 3u);
  EXPECT_TRUE(store.Find(sessions[0].id));
  EXPECT_FALSE(store.Find(sessions[1].id));
  EXPECT_TRUE(store.Find(sessions[2].id));
}

TEST(SessionStoreTest, TokensCompareByValue) {
  EXPECT_TRUE(TokensEqual("abc", "abc"));
  EXPECT_FALSE(TokensEqual("abc", "abd"));
  EXPECT_FALSE(TokensEqual("abc", "ab"));
  EXPECT_FALSE(TokensEqual("", "a"));
}

}  // namespace
}  // namespace millrace::http
