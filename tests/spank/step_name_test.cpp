#include "spank/step_name.h"

#include <gtest/gtest.h>

namespace firstfault::spank {
namespace {

TEST(StepNameTest, AsSlurmPrintsThem) {
  EXPECT_EQ(StepName(0), "0");
  EXPECT_EQ(StepName(12), "12");
  EXPECT_EQ(StepName(0xfffffffb), "batch");
  EXPECT_EQ(StepName(0xfffffffc), "extern");
  EXPECT_EQ(StepName(0xfffffffa), "interactive");
}

}  // namespace
}  // namespace firstfault::spank
