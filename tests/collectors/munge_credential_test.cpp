#include "common/munge_credential.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace ff::munge_credential {
namespace {

TEST(MungeCredential, RoundTripCarriesPayloadAndIds) {
  std::string cred = encode("firstfault-bundle 12 n2 n2-12-step-1");
  DecodeResult r = decode(cred);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.error, DecodeError::none);
  EXPECT_EQ(r.payload, "firstfault-bundle 12 n2 n2-12-step-1");
  EXPECT_EQ(r.uid, ::geteuid());
  EXPECT_EQ(r.gid, ::getegid());
}

TEST(MungeCredential, ReplayIsRefused) {
  std::string cred = encode("once");
  ASSERT_TRUE(decode(cred).ok);
  DecodeResult again = decode(cred);
  EXPECT_FALSE(again.ok);
  EXPECT_EQ(again.error, DecodeError::replayed);
  EXPECT_FALSE(again.message.empty());
}

TEST(MungeCredential, MissingAndGarbage) {
  EXPECT_EQ(decode("").error, DecodeError::missing);
  DecodeResult garbage = decode("MUNGE:not-a-credential:");
  EXPECT_FALSE(garbage.ok);
  EXPECT_EQ(garbage.error, DecodeError::invalid) << garbage.message;
}

TEST(MungeCredential, UnreachableDaemonThrowsWithMungesMessage) {
  try {
    encode("x", "/nonexistent/munge.socket");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("munge"), std::string::npos);
  }
  EXPECT_EQ(decode("MUNGE:abc:", "/nonexistent/munge.socket").error, DecodeError::other);
}

}  // namespace
}  // namespace ff::munge_credential
