// engine/read/pickle_value and engine/read/flight_recorder: PyTorch
// flight-recorder dumps written by Python's pickle (tests/support/
// make_flight_recorder.py wrote tests/unit/data/flight_recorder/: every layout
// version it names, protocols 0, 2, 4 and 5, and hostile files), cut short,
// corrupted, and hand-written opcode sequences for each bound.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engine/read/flight_recorder.h"
#include "engine/read/pickle_value.h"
#include "tests/support/files.h"

namespace {

namespace fs = std::filesystem;
using ff::FlightRecorderDump;
using ff::PickleDocument;
using ff::PickleKind;

const fs::path kData = fs::path(FF_SOURCE_DIR) / "tests/unit/data/flight_recorder";
constexpr std::int64_t kBaseNs = 1733140800000000000;

std::string Fixture(const std::string& name) {
  return ff::test_support::read_file(kData / name);
}

FlightRecorderDump Read(const std::string& bytes, int rank = 3) {
  FlightRecorderDump d;
  EXPECT_NO_THROW(d = ff::read_flight_recorder(bytes, rank));
  return d;
}

// Bytes with NULs in them; a hex escape is cut with "" before a hex digit.
template <std::size_t N>
std::string Bytes(const char (&s)[N]) {
  return std::string(s, N - 1);
}

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += e + "\n";
  return s;
}

// The 8-entry dump of make_flight_recorder.py, read back field by field.
void ExpectTheGeneratedDump(const FlightRecorderDump& d, const std::string& version,
                            const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_TRUE(d.errors.empty()) << Joined(d.errors);
  EXPECT_FALSE(d.truncated);
  EXPECT_EQ(d.version, version);
  EXPECT_EQ(d.rank, 3);
  ASSERT_EQ(d.pg_config.size(), 2u);
  EXPECT_EQ(d.pg_config[0].pg_id_or_name, "0");
  EXPECT_EQ(d.pg_config[0].desc, "default_pg");
  EXPECT_EQ(d.pg_config[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(d.pg_config[1].name, "1");
  EXPECT_EQ(d.pg_config[1].desc, "TP \u00e9\u2014grp");  // UTF-8 after any protocol
  EXPECT_EQ(d.pg_config[1].ranks, (std::vector<int>{0, 1}));
  ASSERT_EQ(d.pg_status.size(), 2u);
  EXPECT_EQ(d.pg_status[0].pg, "0");
  EXPECT_EQ(d.pg_status[0].last_enqueued, 8);
  EXPECT_EQ(d.pg_status[0].last_started, 8);
  EXPECT_EQ(d.pg_status[0].last_completed, 6);
  EXPECT_EQ(d.pg_status[1].last_started, -1);
  ASSERT_EQ(d.entries.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    const ff::FlightRecorderEntry& e = d.entries[i];
    SCOPED_TRACE("entry " + std::to_string(i));
    bool p2p = i % 5 == 4;
    EXPECT_EQ(e.record_id, i);
    EXPECT_EQ(e.pg_id, i == 6 ? "1" : "0");
    EXPECT_EQ(e.pg_name, i == 6 ? "1" : "0");
    EXPECT_EQ(e.pg_desc, i == 6 ? "TP" : "default_pg");
    EXPECT_EQ(e.is_p2p, p2p);
    EXPECT_EQ(e.collective_seq_id, p2p ? 0 : i + 1);
    EXPECT_EQ(e.p2p_seq_id, p2p ? i + 1 : 0);
    EXPECT_EQ(e.op_id, i + 1);
    EXPECT_EQ(e.profiling_name, p2p ? "nccl:send 0->1" : "nccl:all_reduce");
    EXPECT_EQ(e.time_created_ns, kBaseNs + i * 1000000);
    EXPECT_EQ(e.state, i < 6 ? "completed" : (i == 7 ? "started" : "scheduled"));
    using Sizes = std::vector<std::vector<std::int64_t>>;
    EXPECT_EQ(e.input_sizes, (p2p ? Sizes{{4096}} : Sizes{{1024, 1024}}));
    EXPECT_EQ(e.output_sizes, e.input_sizes);
    EXPECT_EQ(e.timeout_ms, 600000);
  }
}

TEST(FlightRecorder, EveryLayoutAtEveryProtocol) {
  for (std::string layout : {"2.3", "2.4", "2.7", "2.10", "ranks-list"}) {
    for (int p : {0, 2, 4, 5}) {
      std::string name = "dump-" + layout + "-p" + std::to_string(p) + ".pkl";
      ExpectTheGeneratedDump(Read(Fixture(name)), layout == "ranks-list" ? "2.4" : layout, name);
    }
  }
}

// A pickle that would run os.system, or build an object, is refused at its
// first GLOBAL/STACK_GLOBAL: nothing after it is looked at, nothing runs.
TEST(FlightRecorder, CodeInThePickleIsRefusedNotRun) {
  const char* marker = "/tmp/firstfault-pickle-executed";
  ::unlink(marker);
  FlightRecorderDump d = Read(Fixture("reduce-os-system.pkl"));
  ASSERT_EQ(d.errors.size(), 1u) << Joined(d.errors);
  EXPECT_NE(d.errors[0].find("opcode 0x63 (GLOBAL) not allowed at byte "), std::string::npos)
      << d.errors[0];
  EXPECT_TRUE(d.entries.empty());
  EXPECT_TRUE(d.version.empty());
  struct stat st;
  EXPECT_NE(::stat(marker, &st), 0);

  d = Read(Fixture("class-instance.pkl"));
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_NE(d.errors[0].find("opcode 0x93 (STACK_GLOBAL) not allowed at byte "), std::string::npos)
      << d.errors[0];
  // Protocol 2 writes bytes as _codecs.encode(...): refused the same way.
  d = Read(Fixture("bytes-p2.pkl"));
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_NE(d.errors[0].find("(GLOBAL) not allowed"), std::string::npos) << d.errors[0];

  for (std::string op : {"R", "b", "i", "o", "\x81", "\x92", "P", "Q", "\x82", "\x8f", "\x96"}) {
    PickleDocument doc = ff::read_pickle("\x80\x02N" + op + ".");
    EXPECT_FALSE(doc.ok);
    EXPECT_NE(doc.error.find("not allowed at byte 3"), std::string::npos) << doc.error;
  }
}

// Cut at every offset: never more than the whole, never a crash; what comes
// back is the dump's first entries, unchanged; a cut after the first entries
// keeps them.
TEST(FlightRecorder, TruncatedDumpKeepsItsFirstEntries) {
  for (std::string name : {"dump-2.4-p2.pkl", "dump-2.10-p4.pkl", "dump-2.4-p0.pkl"}) {
    std::string bytes = Fixture(name);
    FlightRecorderDump whole = Read(bytes);
    ASSERT_EQ(whole.entries.size(), 8u);
    std::size_t before = 0;
    std::size_t at_three_quarters = 0;
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      FlightRecorderDump d = Read(bytes.substr(0, cut));
      SCOPED_TRACE(name + " cut at " + std::to_string(cut));
      ASSERT_TRUE(d.truncated);
      ASSERT_FALSE(d.errors.empty());
      EXPECT_NE(d.errors[0].find("before its STOP opcode"), std::string::npos) << d.errors[0];
      ASSERT_LE(d.entries.size(), 8u);
      EXPECT_GE(d.entries.size(), before);  // a longer prefix never loses entries
      before = d.entries.size();
      for (std::size_t i = 0; i < d.entries.size(); ++i) {
        EXPECT_EQ(d.entries[i].record_id, static_cast<std::int64_t>(i));
        EXPECT_EQ(d.entries[i].state, whole.entries[i].state);
        EXPECT_EQ(d.entries[i].timeout_ms, 600000);  // the last key: a kept entry is whole
      }
      if (cut == bytes.size() * 3 / 4) at_three_quarters = d.entries.size();
      if (cut == bytes.size() / 2) {
        EXPECT_EQ(d.version, whole.version);
      }
    }
    EXPECT_GE(at_three_quarters, 3u) << name;
    EXPECT_GE(before, 7u) << name;
  }
}

TEST(FlightRecorder, WrongTypesSkipTheirEntryAndKeepTheRest) {
  FlightRecorderDump d = Read(Fixture("wrong-types.pkl"));
  EXPECT_FALSE(d.truncated);
  ASSERT_EQ(d.errors.size(), 3u) << Joined(d.errors);
  EXPECT_EQ(d.errors[0], "pg_config '1': 'ranks' holds \"one\", not a rank; group skipped");
  EXPECT_EQ(d.errors[1], "entries[1]: 'collective_seq_id' is str, expected int; entry skipped");
  EXPECT_EQ(d.errors[2], "entries[2]: is list, expected dict; entry skipped");
  ASSERT_EQ(d.pg_config.size(), 1u);
  ASSERT_EQ(d.entries.size(), 2u);
  EXPECT_EQ(d.entries[0].record_id, 0);
  EXPECT_EQ(d.entries[1].record_id, 3);
}

// One list or string referred to from every entry through the memo is read
// once by the pickle reader but would be copied into every entry: the copies
// have a budget, and a text field a length, so the dump cannot make the
// reader copy gigabytes.
TEST(FlightRecorder, MemoSharedValuesAreNotCopiedWithoutBound) {
  FlightRecorderDump d = Read(Fixture("memo-amplified.pkl"));
  EXPECT_FALSE(d.truncated);
  // 16,000,000 numbers at 200,200 per entry (200 sizes of 1000 and their lists).
  EXPECT_EQ(d.entries.size(), ff::kMaxFlightRecorderNumbers / 200200);
  ASSERT_EQ(d.errors.size(), 21u);
  EXPECT_EQ(d.errors[0],
            "entries[79]: 'input_sizes' is past the 16000000 sizes and ranks read from one dump; "
            "entry skipped");
  EXPECT_EQ(d.errors[20], std::to_string(20000 - 79 - 20) + " more errors not listed");
  std::size_t texts = 0;
  for (const auto& e : d.entries) texts += e.profiling_name.size();
  EXPECT_EQ(texts, 0u);
}

TEST(FlightRecorder, AnEntryWithTooManyKeysIsSkipped) {
  std::string p = Bytes(
      "\x80\x02}X\x07\x00\x00\x00"
      "entries](}(");
  for (int i = 0; i < 200; ++i) p += std::string("M") + char(i) + '\0' + "N";
  p += "u}es.";
  FlightRecorderDump d = Read(p);
  ASSERT_EQ(d.errors.size(), 2u) << Joined(d.errors);
  EXPECT_EQ(d.errors[1], "entries[0]: has 200 keys (at most 128); entry skipped");
  ASSERT_EQ(d.entries.size(), 1u);  // the empty dict after it
}

TEST(FlightRecorder, NotADictIsAnError) {
  FlightRecorderDump d = Read(Bytes("\x80\x02]q\x00."));
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0], "the dump is a list, not a dict");
  d = Read("");
  EXPECT_TRUE(d.truncated);
  EXPECT_TRUE(d.entries.empty());
}

TEST(FlightRecorder, EntriesPastTheBoundAreCountedNotRead) {
  std::string p = Bytes(
      "\x80\x02}X\x07\x00\x00\x00"
      "entries](");
  p.append(ff::kMaxFlightRecorderEntries + 5, '}');
  p += "es.";
  FlightRecorderDump d = Read(p);
  EXPECT_EQ(d.entries.size(), ff::kMaxFlightRecorderEntries);
  ASSERT_EQ(d.errors.size(), 2u) << Joined(d.errors);
  EXPECT_EQ(d.errors[0], "no 'version' key");
  EXPECT_EQ(d.errors[1], "5 entries past the first 100000 not read");
}

// --- the pickle reader alone ---

TEST(PickleValue, MemoSharesOneValue) {
  // [l, l] where l = [1] is appended to after both references exist: Python
  // sees the append through both.
  PickleDocument doc = ff::read_pickle(
      "\x80\x02](]q\x05h\x05"
      "eh\x05K\x01"
      "a0.");
  ASSERT_TRUE(doc.ok) << doc.error;
  const ff::PickleValue* outer = doc.root_value();
  ASSERT_EQ(outer->kind, PickleKind::kList);
  ASSERT_EQ(outer->items.size(), 2u);
  EXPECT_EQ(outer->items[0], outer->items[1]);
  EXPECT_EQ(doc.get(outer->items[0])->items.size(), 1u);

  doc = ff::read_pickle("\x80\x02h\x05.");
  EXPECT_FALSE(doc.ok);
  EXPECT_EQ(doc.error, "memo slot 5 read before it was written at byte 2");
  doc = ff::read_pickle("(g7\n.");
  EXPECT_EQ(doc.error, "memo slot 7 read before it was written at byte 1");
  // Slot numbers are bounded (which bounds the memo), not just the count.
  doc = ff::read_pickle("Nr\xff\xff\xff\xff.");
  EXPECT_EQ(doc.error, "memo index 4294967295 (at most 1000000 memo entries) at byte 1");
  // A list holding itself is a value, not a loop in the reader.
  doc =
      ff::read_pickle(Bytes("\x80\x04]\x94h\x00"
                            "a."));
  ASSERT_TRUE(doc.ok) << doc.error;
  EXPECT_EQ(doc.root_value()->items[0], doc.root);
}

TEST(PickleValue, NestingIsBounded) {
  PickleDocument doc = ff::read_pickle(std::string(300, '(') + ".");
  EXPECT_FALSE(doc.ok);
  EXPECT_EQ(doc.error, "containers nested deeper than 256 at byte 256");
  ff::PickleLimits small;
  small.max_stack = 1000;
  doc = ff::read_pickle(std::string(2000, 'N'), small);
  EXPECT_EQ(doc.error, "a stack deeper than 1000 at byte 1000");
  small.max_values = 10;
  doc = ff::read_pickle(std::string(20, 'N'), small);
  EXPECT_EQ(doc.error, "more than 10 values at byte 10");
}

TEST(PickleValue, HugeLengthFieldsAreRefusedBeforeAnyAllocation) {
  PickleDocument doc = ff::read_pickle(Bytes("X\xff\xff\xff\xff"));
  EXPECT_EQ(doc.error, "a string or bytes length of 4294967295 (at most 16777216) at byte 0");
  doc = ff::read_pickle(Bytes("\x8e\xff\xff\xff\xff\xff\xff\xff\x7f"));
  EXPECT_NE(doc.error.find("a string or bytes length of 9223372036854775807"), std::string::npos);
  doc = ff::read_pickle(Bytes("\x8b\xff\xff\xff\x7f"));
  EXPECT_EQ(doc.error, "an integer of 2147483647 bytes at byte 0");
  // A length within bounds but past the end: truncated, not an error.
  doc =
      ff::read_pickle(Bytes("X\x00\x01\x00\x00"
                            "abc"));
  EXPECT_TRUE(doc.truncated);
}

TEST(PickleValue, IntegersBeyond64BitsAreErrors) {
  PickleDocument doc = ff::read_pickle(Bytes("\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."));
  EXPECT_EQ(doc.error, "an integer beyond 64 bits at byte 0");
  doc = ff::read_pickle("I99999999999999999999\n.");
  EXPECT_EQ(doc.error, "INT \"99999999999999999999\" is not a 64-bit integer at byte 0");
  // 2**63 - 1 and -2**63 in LONG1's shortest form, as Python writes them.
  doc = ff::read_pickle(Bytes("\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f."));
  ASSERT_TRUE(doc.ok) << doc.error;
  EXPECT_EQ(doc.root_value()->integer, INT64_MAX);
  doc = ff::read_pickle(Bytes("\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80."));
  ASSERT_TRUE(doc.ok) << doc.error;
  EXPECT_EQ(doc.root_value()->integer, INT64_MIN);
  doc = ff::read_pickle(Bytes("\x8a\x09\xff\xff\xff\xff\xff\xff\xff\x7f\x00."));
  ASSERT_TRUE(doc.ok) << doc.error;  // 2**63 - 1 with a sign byte of padding
  doc = ff::read_pickle(Bytes("\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00."));
  EXPECT_EQ(doc.error, "an integer beyond 64 bits at byte 0");  // 2**63
  doc = ff::read_pickle(Bytes("\x8a\x02\x00\xff."));
  ASSERT_TRUE(doc.ok);
  EXPECT_EQ(doc.root_value()->integer, -256);
}

TEST(PickleValue, ProtocolZeroTextForms) {
  PickleDocument doc =
      ff::read_pickle("(lp0\nI01\naI00\naL123456789012L\naF-2.5\naVa\\u00e9b\naN0.");
  ASSERT_TRUE(doc.ok) << doc.error;
  const ff::PickleValue* list = doc.root_value();
  ASSERT_EQ(list->items.size(), 5u);
  EXPECT_EQ(doc.get(list->items[0])->kind, PickleKind::kBool);
  EXPECT_TRUE(doc.get(list->items[0])->boolean);
  EXPECT_FALSE(doc.get(list->items[1])->boolean);
  EXPECT_EQ(doc.get(list->items[2])->integer, 123456789012);
  EXPECT_EQ(doc.get(list->items[3])->real, -2.5);
  EXPECT_EQ(doc.get(list->items[4])->text, "a\u00e9b");
}

TEST(PickleValue, InvalidUtf8AndStackMisuseAreErrors) {
  EXPECT_EQ(ff::read_pickle(Bytes("X\x01\x00\x00\x00\xff.")).error,
            "a str that is not UTF-8 at byte 0");
  EXPECT_EQ(ff::read_pickle("a").error, "stack underflow at byte 0");
  EXPECT_EQ(ff::read_pickle("NNa").error, "APPEND on a None at byte 2");
  EXPECT_EQ(ff::read_pickle("}(Nu.").error,
            "SETITEMS with an odd number of keys and values at byte 3");
  EXPECT_EQ(ff::read_pickle("\x80\x06N.").error, "pickle protocol 6 at byte 0");
  EXPECT_EQ(ff::read_pickle("e").error, "no MARK to close at byte 0");
}

// Random bytes and randomly corrupted dumps: any result, never a crash or an
// exception (the sanitizer build and fuzz_flight_recorder look harder).
TEST(PickleValue, GarbageNeverCrashes) {
  std::mt19937 rng(20261202);
  std::vector<std::string> seeds = {Fixture("dump-2.4-p2.pkl"), Fixture("dump-2.10-p0.pkl"),
                                    Fixture("dump-2.7-p5.pkl")};
  for (int round = 0; round < 3000; ++round) {
    std::string bytes;
    if (round % 2 == 0) {
      bytes.resize(rng() % 256);
      for (char& c : bytes) c = static_cast<char>(rng());
    } else {
      bytes = seeds[rng() % seeds.size()];
      for (int flips = 1 + rng() % 4; flips > 0; --flips) {
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
      }
    }
    FlightRecorderDump d = Read(bytes);
    EXPECT_LE(d.entries.size(), 8u);
  }
}

}  // namespace
