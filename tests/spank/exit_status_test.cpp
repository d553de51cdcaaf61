#include "spank/exit_status.h"

#include <gtest/gtest.h>

namespace firstfault::spank {
namespace {

TEST(ExitStatusTest, ExitCodes) {
  EXPECT_EQ(FormatExitCode(0), "0:0");
  EXPECT_EQ(FormatExitCode(256), "1:0");
  EXPECT_EQ(FormatExitCode(1280), "5:0");  // the raw status of `exit 5`
  EXPECT_EQ(FormatExitCode(255 << 8), "255:0");
}

TEST(ExitStatusTest, Signals) {
  EXPECT_EQ(FormatExitCode(9), "0:9");
  EXPECT_EQ(FormatExitCode(6 | 0x80), "0:6");  // SIGABRT with a core dump
  EXPECT_EQ(FormatExitCode(15), "0:15");
}

TEST(ExitStatusTest, Failure) {
  EXPECT_FALSE(IsFailedExit(0));
  EXPECT_TRUE(IsFailedExit(256));
  EXPECT_TRUE(IsFailedExit(9));
}

}  // namespace
}  // namespace firstfault::spank
