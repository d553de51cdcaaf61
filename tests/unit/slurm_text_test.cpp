// incident/slurm_text: the one rule set for text that goes to Slurm (the
// diagnosis summary as a job's Comment, a node's drain Reason), rule by rule as
// its header numbers them.
#include "incident/slurm_text.h"

#include <gtest/gtest.h>

#include <string>

namespace ff {
namespace {

bool printable_ascii(const std::string& s) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

TEST(SlurmText, ControlCharactersBecomeSpaces) {
  EXPECT_EQ(slurm_safe_text("a\nb\r\nc\td", 100), "a b c d");
  EXPECT_EQ(slurm_safe_text("red\x1b[31mtext\x07 end\x7f", 100), "red [31mtext end");
  EXPECT_EQ(slurm_safe_text(std::string("nul\0byte", 8), 100), "nul byte");
}

TEST(SlurmText, EachCharacterOutsideAsciiIsOneQuestionMark) {
  EXPECT_EQ(slurm_safe_text("temp\xc3\xa9rature", 100), "temp?rature");    // 2 bytes
  EXPECT_EQ(slurm_safe_text("GPU \xe2\x80\x94 fell", 100), "GPU ? fell");  // 3 bytes
  EXPECT_EQ(slurm_safe_text("fire \xf0\x9f\x94\xa5!", 100), "fire ?!");    // 4 bytes
  EXPECT_EQ(slurm_safe_text("\xe4\xb8\xad\xe6\x96\x87", 100), "??");       // two characters
}

TEST(SlurmText, EachByteThatIsNotUtf8IsOneQuestionMark) {
  EXPECT_EQ(slurm_safe_text("latin1 caf\xe9!", 100), "latin1 caf?!");
  EXPECT_EQ(slurm_safe_text("lone \x80\xbf", 100), "lone ??");          // continuation bytes
  EXPECT_EQ(slurm_safe_text("overlong \xc0\xaf", 100), "overlong ??");  // '/' in 2 bytes
  EXPECT_EQ(slurm_safe_text("surrogate \xed\xa0\x80", 100), "surrogate ???");
  EXPECT_EQ(slurm_safe_text("past max \xf4\x90\x80\x80", 100), "past max ????");
  EXPECT_EQ(slurm_safe_text("cut short \xe2\x80", 100), "cut short ??");  // at the end
  EXPECT_EQ(slurm_safe_text("\xe2\x80 x", 100), "?? x");                  // before ASCII
}

TEST(SlurmText, ShellQuotingCharactersAreRemoved) {
  EXPECT_EQ(slurm_safe_text("RuntimeError: \"x\" 'y' `z` $(id) a\\b", 100),
            "RuntimeError: x y z (id) ab");
}

TEST(SlurmText, EqualsSignsStay) {
  EXPECT_EQ(slurm_safe_text("exit=1 JobId=1 Comment=evil", 100), "exit=1 JobId=1 Comment=evil");
}

TEST(SlurmText, SpacesAreCollapsedAndTrimmed) {
  EXPECT_EQ(slurm_safe_text("  NCCL   WARN \n\n timeout  ", 100), "NCCL WARN timeout");
  EXPECT_EQ(slurm_safe_text(" \t\r\n ", 100), "");
  // A removed character does not leave two spaces behind.
  EXPECT_EQ(slurm_safe_text("a \" b", 100), "a b");
}

TEST(SlurmText, ALongTextIsCutWithDots) {
  EXPECT_EQ(slurm_safe_text("0123456789", 10), "0123456789");
  EXPECT_EQ(slurm_safe_text("0123456789A", 10), "0123456...");
  EXPECT_EQ(slurm_safe_text(std::string(5000, 'x'), 1000).size(), 1000u);
  // Spaces at the cut go, and trailing spaces alone are no reason to cut.
  EXPECT_EQ(slurm_safe_text("012345 789A", 10), "012345...");
  EXPECT_EQ(slurm_safe_text("0123456789   ", 10), "0123456789");
  EXPECT_EQ(slurm_safe_text("0123456789 b", 10), "0123456...");
  // Dropped characters do not count against the limit.
  EXPECT_EQ(slurm_safe_text("\"0123456789\"", 10), "0123456789");
  // Below four bytes there is no room for dots.
  EXPECT_EQ(slurm_safe_text("abcdef", 3), "abc");
  EXPECT_EQ(slurm_safe_text("abcdef", 0), "");
  // A character outside ASCII is never split: it was one '?' before the cut.
  EXPECT_EQ(slurm_safe_text("abcdefg\xc3\xa9", 8), "abcdefg?");
}

TEST(SlurmText, TheRulesHoldAgainAfterThemselves) {
  const std::string hostile =
      "RuntimeError: \"; touch /tmp/pwned; echo \"$(id)` id` ' || \\\n JobId=1 Comment=evil\r"
      "\x1b]0;title\x07\x1b[31mred\x7f \xc3\xa9\xff end   " +
      std::string(3000, 'z');
  for (std::size_t limit : {0u, 3u, 4u, 50u, 200u, 1000u, 10000u}) {
    std::string once = slurm_safe_text(hostile, limit);
    EXPECT_LE(once.size(), limit);
    EXPECT_TRUE(printable_ascii(once)) << once;
    EXPECT_EQ(once.find_first_of("\"'`$\\"), std::string::npos) << once;
    EXPECT_EQ(once.find("  "), std::string::npos) << once;
    EXPECT_EQ(slurm_safe_text(once, limit), once) << limit;
  }
}

}  // namespace
}  // namespace ff
