// Unit tests for extract/timestamp_parser: every timestamp form of
// docs/spec/incident.md, year inference, zones with DST, body offsets.
#include "incident/time/timestamp_parser.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "incident/time/time.h"

namespace ff {
namespace {

TimeUs at(const std::string& iso) {
  MaybeTime t = parse_iso8601_utc(iso);
  if (!t) throw std::runtime_error("bad test time " + iso);
  return *t;
}

// A job context in UTC whose reference lies in early November 2026.
TimeContext november_utc() {
  TimeContext tc;
  tc.reference = at("2026-11-01T00:00:00Z");
  return tc;
}

TimeContext in_zone(const char* zone, const std::string& reference) {
  TimeContext tc;
  tc.zone = find_zone(zone);
  tc.reference = at(reference);
  return tc;
}

std::string time_of(const ParsedLine& p) {
  return p.time ? format_time(*p.time) : "<none>";
}

std::string body_of(std::string_view line, const ParsedLine& p) {
  return std::string(line.substr(std::min(p.body, line.size())));
}

// --- RFC 3164 -------------------------------------------------------------

TEST(TimestampParser, Rfc3164TakesYearFromReference) {
  const std::string line = "Nov  2 10:41:07 host kernel: [86123.512004] msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_STREQ(p.form, "rfc3164");
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07Z");
  EXPECT_FALSE(p.bad_time);
}

TEST(TimestampParser, Rfc3164BodySkipsHostProgramAndDmesgStamp) {
  const std::string line = "Nov  2 10:41:07 host kernel: [86123.512004] msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_EQ(body_of(line, p), "msg");
  ASSERT_TRUE(p.dmesg_seconds.has_value());
  EXPECT_NEAR(*p.dmesg_seconds, 86123.512004, 1e-6);
}

TEST(TimestampParser, Rfc3164BodyWithoutDmesgStampStartsAfterProgram) {
  const std::string line = "Nov 12 10:41:07 gpu-a02 kernel: NVRM: Xid (PCI:0000:5d:00): 79";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_EQ(time_of(p), "2026-11-12T10:41:07Z");
  EXPECT_EQ(body_of(line, p), "NVRM: Xid (PCI:0000:5d:00): 79");
  EXPECT_FALSE(p.dmesg_seconds.has_value());
}

TEST(TimestampParser, Rfc3164BodySkipsProgramWithPid) {
  const std::string line = "Nov  2 10:41:07 gpu-a02 CRON[1234]: (root) CMD (true)";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_EQ(body_of(line, p), "(root) CMD (true)");
}

TEST(TimestampParser, Rfc3164DecemberLineWithJanuaryReferenceIsPreviousYear) {
  TimeContext tc;
  tc.reference = at("2027-01-01T03:00:00Z");
  ParsedLine p = parse_line_time("Dec 31 23:59:58 host kernel: msg", tc);
  EXPECT_EQ(time_of(p), "2026-12-31T23:59:58Z");
}

TEST(TimestampParser, Rfc3164JanuaryLineWithDecemberReferenceIsNextYear) {
  TimeContext tc;
  tc.reference = at("2026-12-31T22:00:00Z");
  ParsedLine p = parse_line_time("Jan  1 00:00:05 host kernel: msg", tc);
  EXPECT_EQ(time_of(p), "2027-01-01T00:00:05Z");
}

TEST(TimestampParser, Rfc3164IsLocalToTheJobZone) {
  // Berlin is UTC+2 in summer (CEST).
  ParsedLine p = parse_line_time("Jul  1 12:00:00 host kernel: msg",
                                 in_zone("Europe/Berlin", "2026-07-01T00:00:00Z"));
  EXPECT_EQ(time_of(p), "2026-07-01T10:00:00Z");
}

// --- RFC 3339 / ISO 8601 / Python logging ---------------------------------

TEST(TimestampParser, Rfc3339WithZ) {
  const std::string line = "2026-11-02T10:41:07.512004Z gpu-a02 kernel: msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_STREQ(p.form, "rfc3339");
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07.512004Z");
  EXPECT_EQ(body_of(line, p), "msg");
}

TEST(TimestampParser, Rfc3339WithPositiveOffset) {
  const std::string line = "2026-11-02T12:41:07.5+02:00 gpu-a02 kernel: msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_STREQ(p.form, "rfc3339");
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07.5Z");
  EXPECT_EQ(body_of(line, p), "msg");
}

TEST(TimestampParser, Rfc3339WithNegativeOffset) {
  ParsedLine p = parse_line_time("2026-11-02T05:41:07-05:00 host kernel: msg", november_utc());
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07Z");
}

TEST(TimestampParser, Rfc3339OffsetWithoutColonAndLowercaseZ) {
  EXPECT_EQ(time_of(parse_line_time("2026-11-02T16:11:07+0530 h k: m", november_utc())),
            "2026-11-02T10:41:07Z");
  EXPECT_EQ(time_of(parse_line_time("2026-11-02T10:41:07z h k: m", november_utc())),
            "2026-11-02T10:41:07Z");
}

TEST(TimestampParser, Rfc3339ZeroOffsetWithDmesgStampInBody) {
  const std::string line =
      "2026-10-29T19:57:09.000000+00:00 a100-n11 kernel: [12.5] NVRM: Xid (PCI:0000:07:00): 64";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_EQ(time_of(p), "2026-10-29T19:57:09Z");
  EXPECT_EQ(body_of(line, p), "NVRM: Xid (PCI:0000:07:00): 64");
  ASSERT_TRUE(p.dmesg_seconds.has_value());
  EXPECT_DOUBLE_EQ(*p.dmesg_seconds, 12.5);
}

TEST(TimestampParser, Rfc3339IgnoresTheJobZone) {
  // An explicit zone in the line wins over the job's zone.
  ParsedLine p = parse_line_time("2026-07-01T12:00:00Z host kernel: msg",
                                 in_zone("Europe/Berlin", "2026-07-01T00:00:00Z"));
  EXPECT_EQ(time_of(p), "2026-07-01T12:00:00Z");
}

TEST(TimestampParser, IsoWithoutZoneIsLocalToTheJobZone) {
  ParsedLine p = parse_line_time("2026-07-01T12:00:00 something happened",
                                 in_zone("Europe/Berlin", "2026-07-01T00:00:00Z"));
  EXPECT_STREQ(p.form, "iso-local");
  EXPECT_EQ(time_of(p), "2026-07-01T10:00:00Z");
}

TEST(TimestampParser, IsoWithoutZoneInUtcContextIsUtc) {
  ParsedLine p = parse_line_time("2026-11-02T10:41:07 something happened", november_utc());
  EXPECT_STREQ(p.form, "iso-local");
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07Z");
}

TEST(TimestampParser, PythonLoggingWithCommaMilliseconds) {
  const std::string line = "2026-11-02 08:04:13,168 INFO [train.py:412] step 1000";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_STREQ(p.form, "iso-local");
  EXPECT_EQ(time_of(p), "2026-11-02T08:04:13.168Z");
  EXPECT_EQ(body_of(line, p), "INFO [train.py:412] step 1000");
}

TEST(TimestampParser, PythonLoggingInWinterZone) {
  ParsedLine p = parse_line_time("2026-01-15 12:00:00,000 INFO x",
                                 in_zone("Europe/Berlin", "2026-01-15T00:00:00Z"));
  EXPECT_EQ(time_of(p), "2026-01-15T11:00:00Z");
}

// --- dmesg ------------------------------------------------------------------

TEST(TimestampParser, DmesgRawWithBootTime) {
  TimeContext tc = november_utc();
  tc.boot_time = at("2026-11-01T00:00:00Z");
  const std::string line = "[86123.512004] NVRM: Xid (PCI:0000:2a:00): 79";
  ParsedLine p = parse_line_time(line, tc);
  EXPECT_STREQ(p.form, "dmesg");
  EXPECT_EQ(time_of(p), "2026-11-01T23:55:23.512004Z");
  ASSERT_TRUE(p.dmesg_seconds.has_value());
  EXPECT_NEAR(*p.dmesg_seconds, 86123.512004, 1e-6);
  EXPECT_EQ(body_of(line, p), "NVRM: Xid (PCI:0000:2a:00): 79");
}

TEST(TimestampParser, DmesgRawWithPaddedSeconds) {
  TimeContext tc = november_utc();
  tc.boot_time = at("2026-11-01T00:00:00Z");
  const std::string line = "[   17.402000] mlx5_core 0000:4b:00.0 mlx5_0: Port: 1 Link ACTIVE";
  ParsedLine p = parse_line_time(line, tc);
  EXPECT_EQ(time_of(p), "2026-11-01T00:00:17.402Z");
  EXPECT_EQ(body_of(line, p), "mlx5_core 0000:4b:00.0 mlx5_0: Port: 1 Link ACTIVE");
}

// fuzz/crashes/fuzz_timestamp_parser: 20 digits of seconds overflowed the
// microsecond arithmetic (UBSan). No uptime has more than 10 digits.
TEST(TimestampParser, DmesgSecondsBeyondAnyUptimeAreNoTimestamp) {
  TimeContext tc = november_utc();
  tc.boot_time = at("2026-11-01T00:00:00Z");
  ParsedLine p = parse_line_time("[99999999999999999999.0] x", tc);
  EXPECT_FALSE(p.time.has_value());
  EXPECT_FALSE(p.dmesg_seconds.has_value());
  EXPECT_EQ(time_of(parse_line_time("[9999999999.5] x", tc)).substr(0, 2), "23");  // year 2343
}

TEST(TimestampParser, DmesgRawWithoutBootTimeHasSecondsButNoTime) {
  const std::string line = "[86123.512004] msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_FALSE(p.time.has_value());
  ASSERT_TRUE(p.dmesg_seconds.has_value());
  EXPECT_NEAR(*p.dmesg_seconds, 86123.512004, 1e-6);
  EXPECT_FALSE(p.bad_time);
  EXPECT_EQ(body_of(line, p), "msg");
}

TEST(TimestampParser, DmesgHumanReadable) {
  const std::string line = "[Mon Nov  2 10:41:07 2026] msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_STREQ(p.form, "dmesg-T");
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07Z");
  EXPECT_EQ(body_of(line, p), "msg");
}

TEST(TimestampParser, DmesgHumanReadableTwoDigitDay) {
  const std::string line = "[Fri Nov 13 01:02:03 2026] NVRM: Xid (PCI:0000:c3:00): 149, x";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_EQ(time_of(p), "2026-11-13T01:02:03Z");
  EXPECT_EQ(body_of(line, p), "NVRM: Xid (PCI:0000:c3:00): 149, x");
}

TEST(TimestampParser, DmesgHumanReadableIsLocalToTheJobZone) {
  ParsedLine p = parse_line_time("[Wed Jul  1 12:00:00 2026] msg",
                                 in_zone("Europe/Berlin", "2026-07-01T00:00:00Z"));
  EXPECT_EQ(time_of(p), "2026-07-01T10:00:00Z");
}

// --- Fabric Manager, glog, Slurm ------------------------------------------

TEST(TimestampParser, FabricManager) {
  const std::string line = "[Nov 02 2026 10:41:07] [ERROR] [tid 1234] msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_STREQ(p.form, "fabricmanager");
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07Z");
  EXPECT_EQ(body_of(line, p), "[ERROR] [tid 1234] msg");
}

TEST(TimestampParser, FabricManagerUsesItsOwnYearNotTheReference) {
  TimeContext tc;
  tc.reference = at("2027-06-01T00:00:00Z");
  ParsedLine p = parse_line_time("[Oct 23 2026 06:14:57] [INFO] [tid 1971] x", tc);
  EXPECT_EQ(time_of(p), "2026-10-23T06:14:57Z");
}

TEST(TimestampParser, Glog) {
  const std::string line = "E1102 10:41:07.512004 1234 file.cpp:42] msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_STREQ(p.form, "glog");
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07.512004Z");
  EXPECT_EQ(body_of(line, p), "msg");
}

TEST(TimestampParser, GlogWithPytorchRankPrefix) {
  const std::string line = "[rank3]:[E1102 10:41:07.512004 1234 ProcessGroupNCCL.cpp:616] msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_STREQ(p.form, "glog");
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07.512004Z");
  EXPECT_EQ(body_of(line, p), "msg");
}

TEST(TimestampParser, GlogNanosecondFractionIsTruncatedToMicroseconds) {
  const std::string line =
      "[rank2]:[E1104 03:27:41.712715704 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_EQ(time_of(p), "2026-11-04T03:27:41.712715Z");
  EXPECT_EQ(body_of(line, p), "[Rank 2] Watchdog caught");
}

TEST(TimestampParser, GlogDecemberWithJanuaryReferenceIsPreviousYear) {
  TimeContext tc;
  tc.reference = at("2027-01-01T01:00:00Z");
  ParsedLine p = parse_line_time("I1231 23:00:00.000000 1 f.cpp:1] x", tc);
  EXPECT_EQ(time_of(p), "2026-12-31T23:00:00Z");
}

TEST(TimestampParser, RankPrefixWithoutGlogHasNoTimeAndBodyAfterPrefix) {
  const std::string line = "[rank3]: ValueError: sequence 18211 has 8193 tokens";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_FALSE(p.time.has_value());
  EXPECT_FALSE(p.bad_time);
  EXPECT_EQ(body_of(line, p), "ValueError: sequence 18211 has 8193 tokens");
}

TEST(TimestampParser, Slurm) {
  const std::string line = "[2026-11-02T10:41:07.512] error: msg";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_STREQ(p.form, "slurm");
  EXPECT_EQ(time_of(p), "2026-11-02T10:41:07.512Z");
  EXPECT_EQ(body_of(line, p), "error: msg");
}

TEST(TimestampParser, SlurmIsLocalToTheJobZone) {
  ParsedLine p = parse_line_time("[2026-01-15T12:00:00.000] error: msg",
                                 in_zone("Europe/Berlin", "2026-01-15T00:00:00Z"));
  EXPECT_EQ(time_of(p), "2026-01-15T11:00:00Z");
}

// --- no time, bad time ----------------------------------------------------

TEST(TimestampParser, NcclLineHasNoTimestamp) {
  const std::string line = "host:1:2 [0] NCCL WARN x";
  ParsedLine p = parse_line_time(line, november_utc());
  EXPECT_FALSE(p.time.has_value());
  EXPECT_STREQ(p.form, "none");
  EXPECT_FALSE(p.bad_time);
  EXPECT_FALSE(p.dmesg_seconds.has_value());
  EXPECT_EQ(p.body, 0u);
}

TEST(TimestampParser, TracebackLineHasNoTimestamp) {
  ParsedLine p = parse_line_time("Traceback (most recent call last):", november_utc());
  EXPECT_FALSE(p.time.has_value());
  EXPECT_FALSE(p.bad_time);
}

TEST(TimestampParser, EmptyLineHasNoTimestamp) {
  ParsedLine p = parse_line_time("", november_utc());
  EXPECT_FALSE(p.time.has_value());
  EXPECT_FALSE(p.bad_time);
}

TEST(TimestampParser, Rfc3164February30IsBadTime) {
  ParsedLine p = parse_line_time("Feb 30 10:41:07 host kernel: msg", november_utc());
  EXPECT_FALSE(p.time.has_value());
  EXPECT_TRUE(p.bad_time);
}

TEST(TimestampParser, Rfc3339February30IsBadTime) {
  ParsedLine p = parse_line_time("2026-02-30T10:41:07Z host kernel: msg", november_utc());
  EXPECT_FALSE(p.time.has_value());
  EXPECT_TRUE(p.bad_time);
}

TEST(TimestampParser, SlurmFebruary30IsBadTime) {
  ParsedLine p = parse_line_time("[2026-02-30T10:41:07.512] error: msg", november_utc());
  EXPECT_FALSE(p.time.has_value());
  EXPECT_TRUE(p.bad_time);
}

TEST(TimestampParser, GlogFebruary30IsBadTime) {
  ParsedLine p = parse_line_time("E0230 10:41:07.512004 1234 file.cpp:42] msg", november_utc());
  EXPECT_FALSE(p.time.has_value());
  EXPECT_TRUE(p.bad_time);
}

TEST(TimestampParser, HourOutOfRangeGivesNoTime) {
  ParsedLine p = parse_line_time("Nov  2 25:41:07 host kernel: msg", november_utc());
  EXPECT_FALSE(p.time.has_value());
}

TEST(TimestampParser, TruncatedTimestampsGiveNoTimeAndDoNotCrash) {
  for (const char* line : {"Nov", "Nov  2", "Nov  2 10:4", "[", "[1", "[123.", "[Mon Nov  2",
                           "[Nov 02 2026", "E1102", "E1102 10:41", "[rank3]:", "[rank3]:[",
                           "2026-11-02", "2026-11-02T10:41:0", "[2026-11-02T10:41"}) {
    ParsedLine p = parse_line_time(line, november_utc());
    EXPECT_FALSE(p.time.has_value()) << line;
    EXPECT_LE(p.body, std::string_view(line).size()) << line;
  }
}

// --- zones ------------------------------------------------------------------

TEST(TimestampParser, FindZoneUtcNamesGiveNull) {
  EXPECT_EQ(find_zone("UTC"), nullptr);
  EXPECT_EQ(find_zone("Etc/UTC"), nullptr);
  EXPECT_EQ(find_zone(""), nullptr);
}

TEST(TimestampParser, FindZoneUnknownNameThrows) {
  EXPECT_THROW(find_zone("Mars/Olympus_Mons"), std::runtime_error);
}

TEST(TimestampParser, LocalToUtcBerlinSummerIsTwoHoursAhead) {
  TimeContext tc;
  tc.zone = find_zone("Europe/Berlin");
  ASSERT_NE(tc.zone, nullptr);
  EXPECT_EQ(format_time(local_to_utc(2026, 7, 1, 12, 0, 0, 0, tc)), "2026-07-01T10:00:00Z");
}

TEST(TimestampParser, LocalToUtcBerlinWinterIsOneHourAhead) {
  TimeContext tc;
  tc.zone = find_zone("Europe/Berlin");
  EXPECT_EQ(format_time(local_to_utc(2026, 1, 15, 12, 0, 0, 0, tc)), "2026-01-15T11:00:00Z");
}

TEST(TimestampParser, LocalToUtcKeepsMicroseconds) {
  TimeContext tc;
  tc.zone = find_zone("Europe/Berlin");
  EXPECT_EQ(format_time(local_to_utc(2026, 1, 15, 12, 0, 0, 250, tc)),
            "2026-01-15T11:00:00.00025Z");
}

TEST(TimestampParser, LocalToUtcWithoutZoneIsUtc) {
  TimeContext tc;
  EXPECT_EQ(format_time(local_to_utc(2026, 7, 1, 12, 0, 0, 0, tc)), "2026-07-01T12:00:00Z");
}

TEST(TimestampParser, Rfc3164AcrossBerlinDstChange) {
  // Berlin leaves summer time on 2026-10-25 at 03:00 local.
  TimeContext tc = in_zone("Europe/Berlin", "2026-10-25T00:00:00Z");
  EXPECT_EQ(time_of(parse_line_time("Oct 24 12:00:00 h k: m", tc)), "2026-10-24T10:00:00Z");
  EXPECT_EQ(time_of(parse_line_time("Oct 26 12:00:00 h k: m", tc)), "2026-10-26T11:00:00Z");
}

}  // namespace
}  // namespace ff
