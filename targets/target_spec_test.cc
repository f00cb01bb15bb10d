#include "targets/target_spec.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace fusefuzz {
namespace {

TEST(TargetSpec, ParsesEachKindAndKeepsTheTextAsWritten) {
  const TargetSpec e = TargetSpec::Parse("embedded");
  EXPECT_TRUE(e.embedded());
  EXPECT_EQ(e.text(), "embedded");
  const TargetSpec x = TargetSpec::Parse("exec:./my-engine --fast");
  EXPECT_EQ(x.kind(), TargetKind::kExec);
  EXPECT_EQ(x.command(), "./my-engine --fast");
  const TargetSpec p = TargetSpec::Parse("pytorch:fx");
  EXPECT_TRUE(p.builtin("pytorch"));
  EXPECT_FALSE(p.builtin("onnxruntime"));
  EXPECT_EQ(p.mode(), "fx");
  // A bare engine name takes its first mode and keeps its text.
  const TargetSpec o = TargetSpec::Parse("onnxruntime");
  EXPECT_EQ(o.mode(), "all");
  EXPECT_EQ(o.text(), "onnxruntime");
}

TEST(TargetSpec, RefusesUnknownFormsAndModes) {
  EXPECT_FALSE(TargetSpec::TryParse("exec:"));  // no command
  EXPECT_FALSE(TargetSpec::TryParse("tvm:llvm"));
  EXPECT_FALSE(TargetSpec::TryParse("Embedded"));
  EXPECT_THROW(TargetSpec::Parse("tvm"), InputError);
  try {
    TargetSpec::TryParse("armnn:fp8");
    FAIL() << "an unknown mode must throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown armnn mode 'fp8'"), std::string::npos);
  }
  // Of() never throws: a test's own target name or a bad mode is simply no spec.
  EXPECT_FALSE(TargetSpec::Of("plus-one"));
  EXPECT_FALSE(TargetSpec::Of("armnn:fp8"));
  EXPECT_TRUE(IsEmbeddedSpec("embedded"));
  EXPECT_FALSE(IsEmbeddedSpec("exec:embedded"));
  EXPECT_TRUE(IsExecSpec("exec:x"));
  EXPECT_FALSE(IsExecSpec("pytorch:fx"));
}

}  // namespace
}  // namespace fusefuzz
