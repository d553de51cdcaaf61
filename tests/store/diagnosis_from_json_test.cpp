// A stored diagnosis read back into ff::Diagnosis serialises to the same
// bytes, so `show` prints the engine's own report of what was stored.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_from_json.h"
#include "engine/verdict/text_report.h"
#include "tests/store/store_fixture.h"

TEST(DiagnosisFromJson, EveryExampleRoundTripsByteForByte) {
  for (const auto& name : fftest::example_names()) {
    SCOPED_TRACE(name);
    std::string text = fftest::example_diagnosis(name);
    auto d = ff::agent::diagnosis_from_json(nlohmann::json::parse(text));
    EXPECT_EQ(ff::diagnosis_to_json(d), text);
  }
}

TEST(DiagnosisFromJson, ForeignShapesDoNotThrow) {
  for (const char* text : {"null", "[]", "{}", R"({"verdict": 3, "root_causes": [1, {"node": 2}]})",
                           R"({"evidence": [{"time": "yesterday", "line": -1}]})"}) {
    auto d = ff::agent::diagnosis_from_json(nlohmann::json::parse(text));
    EXPECT_NO_THROW(ff::diagnosis_to_text(d, false)) << text;
  }
}
