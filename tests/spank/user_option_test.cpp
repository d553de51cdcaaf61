#include "spank/user_option.h"

#include <gtest/gtest.h>

namespace firstfault::spank {
namespace {

TEST(UserOptionTest, OffWords) {
  for (const char* value : {"off", "OFF", "no", "false", "0", "disable", "Disabled"}) {
    EXPECT_EQ(ParseUserChoice(value), UserChoice::kOff) << value;
  }
}

TEST(UserOptionTest, OnWords) {
  for (const char* value : {"on", "yes", "true", "1", "enable", ""}) {
    EXPECT_EQ(ParseUserChoice(value), UserChoice::kOn) << value;
  }
}

TEST(UserOptionTest, Typos) {
  EXPECT_EQ(ParseUserChoice("of"), UserChoice::kInvalid);
  EXPECT_EQ(ParseUserChoice("off "), UserChoice::kInvalid);
}

}  // namespace
}  // namespace firstfault::spank
