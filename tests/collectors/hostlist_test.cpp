#include "common/hostlist.h"

#include <gtest/gtest.h>

namespace ff {
namespace {

using Names = std::vector<std::string>;

TEST(Hostlist, SimpleRange) {
  EXPECT_EQ(expand_hostlist("n[1-3]"), (Names{"n1", "n2", "n3"}));
}

TEST(Hostlist, SingleNameAndPlainList) {
  EXPECT_EQ(expand_hostlist("login1"), (Names{"login1"}));
  EXPECT_EQ(expand_hostlist("a,b,c"), (Names{"a", "b", "c"}));
}

TEST(Hostlist, ZeroPaddingAndCommasInsideBrackets) {
  EXPECT_EQ(expand_hostlist("gpu-a[01-03,07],login1"),
            (Names{"gpu-a01", "gpu-a02", "gpu-a03", "gpu-a07", "login1"}));
  EXPECT_EQ(expand_hostlist("a[08-10]"), (Names{"a08", "a09", "a10"}));
}

TEST(Hostlist, SeveralBracketGroupsMultiply) {
  EXPECT_EQ(expand_hostlist("r[1-2]n[1-2]"), (Names{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(expand_hostlist("r[1-2]-ib"), (Names{"r1-ib", "r2-ib"}));
}

TEST(Hostlist, EmptyGivesNoNames) {
  EXPECT_TRUE(expand_hostlist("").empty());
}

TEST(Hostlist, MalformedIsRefused) {
  EXPECT_THROW(expand_hostlist("n[1-3"), std::invalid_argument);
  EXPECT_THROW(expand_hostlist("n1-3]"), std::invalid_argument);
  EXPECT_THROW(expand_hostlist("n[3-1]"), std::invalid_argument);
  EXPECT_THROW(expand_hostlist("n[a-b]"), std::invalid_argument);
  EXPECT_THROW(expand_hostlist("n[[1-2]]"), std::invalid_argument);
}

// fuzz/crashes/fuzz_hostlist: a range ending at the largest number once
// looped forever (++v wrapped to 0).
TEST(Hostlist, RangeEndingAtTheLargestNumberEnds) {
  EXPECT_EQ(expand_hostlist("n[18446744073709551615]"), (Names{"n18446744073709551615"}));
  EXPECT_EQ(expand_hostlist("n[18446744073709551614-18446744073709551615]").size(), 2u);
}

TEST(Hostlist, TooManyNamesAreRefused) {
  EXPECT_EQ(expand_hostlist("n[1-65536]").size(), 65536u);
  EXPECT_THROW(expand_hostlist("n[1-65537]"), std::invalid_argument);
  EXPECT_THROW(expand_hostlist("n[0-99999999999]"), std::invalid_argument);
  EXPECT_THROW(expand_hostlist("r[1-1000]n[1-1000]"), std::invalid_argument);
  EXPECT_THROW(expand_hostlist("a[1-65536],b"), std::invalid_argument);
}

}  // namespace
}  // namespace ff
