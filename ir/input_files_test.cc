// Input-file defects of issue 11: what is read at all (regular files of bounded size), when a
// hostile file is refused (at its first impossible byte), duplicate keys, overflowing window
// sizes, pool booleans, tensors files against their graph, and DOT text of hostile names.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ir/error.h"
#include "ir/json_io.h"
#include "ir/printers.h"
#include "ir/verifier.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

fs::path Dir() {
  fs::path p = fs::temp_directory_path() / ("fusefuzz-input-files-" + std::to_string(getpid()));
  fs::create_directories(p);
  return p;
}

std::string Write(const std::string& name, const std::string& text) {
  fs::path p = Dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// A file of `size` zero bytes that takes no disk space (sparse).
std::string Sparse(const std::string& name, off_t size) {
  std::string p = (Dir() / name).string();
  int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(ftruncate(fd, size), 0);
  close(fd);
  return p;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<accepted>";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "message: " << (text)

class InputFiles : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove_all(Dir()); }
};

TEST_F(InputFiles, FileOfZeroBytesIsRefusedAtItsFirstByte) {
  // 64 MiB of NUL bytes (sparse): refused at byte 0 after reading one piece, not after
  // reading it all and parsing.
  std::string p = Sparse("zeros.json", off_t{64} << 20);
  std::string e = ErrorOf([&] { ReadJsonFile(p); });
  EXPECT_CONTAINS(e, p + ": byte 0 is 0x00, a control character");
}

TEST_F(InputFiles, ControlByteInsideTheTextIsRefusedWhereItIs) {
  std::string p = Write("nul.json", std::string("{\"format\": \"a\0b\"}", 17));
  EXPECT_CONTAINS(ErrorOf([&] { ReadGraphFile(p); }), p + ": byte 13 is 0x00");
}

TEST_F(InputFiles, NonObjectFirstCharacterIsRefused) {
  std::string p = Write("text.json", "  hello, this is not JSON");
  EXPECT_CONTAINS(ErrorOf([&] { ReadGraphFile(p); }),
                  p + ": byte 2 is 'h': a fusefuzz file (graph, tensors, reproducer, config) is "
                      "a JSON object");
  // A byte order mark before the object is fine (the parser accepts it too).
  std::string bom = Write("bom.json", "\xEF\xBB\xBF{\"x\": {\"shape\": [1], \"data\": [1]}}");
  EXPECT_EQ(ReadTensorsFile(bom).size(), 1u);
}

TEST_F(InputFiles, FileOverTheSizeLimitIsRefusedBeforeReading) {
  // 2 GiB (sparse): over the default limit of 1 GiB.
  std::string big = Sparse("big.json", off_t{2} << 30);
  EXPECT_CONTAINS(ErrorOf([&] { ReadGraphFile(big); }),
                  big + ": file is 2147483648 bytes, larger than the limit of 1073741824 bytes");
  Limits l;
  l.max_file_bytes = 10;
  std::string p = Write("eleven.json", "{\"a\": 123}\n");
  EXPECT_CONTAINS(ErrorOf([&] { ReadJsonFile(p, l); }), "larger than the limit of 10 bytes");
}

TEST_F(InputFiles, DevZeroIsRefusedAsADevice) {
  EXPECT_CONTAINS(ErrorOf([] { ReadGraphFile("/dev/zero"); }),
                  "/dev/zero: cannot read file: it is a character device");
}

TEST_F(InputFiles, FifoIsRefusedWithoutWaitingForAWriter) {
  // Nobody ever writes: opening it for reading used to block forever.
  std::string p = (Dir() / "fifo.json").string();
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  EXPECT_CONTAINS(ErrorOf([&] { ReadTensorsFile(p); }),
                  p + ": cannot read file: it is a FIFO (named pipe)");
}

TEST_F(InputFiles, DuplicateKeysAreRefusedWithTheirPointer) {
  const std::string g = R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 1, 2, 2]}],
    "nodes": [{"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["y"]},
              {"name": "l", "op": "LeakyRelu", "inputs": ["y"], "outputs": ["z"],
               "attrs": {"alpha": 0.1, "alpha": 0.2}}],
    "outputs": ["z"]})";
  EXPECT_CONTAINS(ErrorOf([&] { ParseGraph(g, "g.json"); }),
                  "g.json: /nodes/1/attrs/alpha: duplicate key \"alpha\"");
  EXPECT_CONTAINS(ErrorOf([] { ParseJson(R"({"a": 1, "b": [0, {"c": 1, "c": 1}]})", "t.json"); }),
                  "t.json: /b/1/c: duplicate key \"c\"");
  // The same key in different objects is fine; "~" and "/" are escaped in the pointer.
  EXPECT_NO_THROW(ParseJson(R"({"a": {"k": 1}, "b": {"k": 2}})", "t.json"));
  EXPECT_CONTAINS(ErrorOf([] { ParseJson(R"({"a/b": {"~": 1, "~": 2}})", "t.json"); }),
                  "t.json: /a~1b/~0: duplicate key");
  // Objects with many keys (searched by hash beyond 16), and frames reused after an object
  // closes: keys of a closed object do not count in the next one.
  std::string many = R"({"m": {)";
  for (int i = 0; i < 40; ++i)
    many += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  EXPECT_NO_THROW(ParseJson(many + R"("k40": 0}})", "t.json"));
  EXPECT_CONTAINS(ErrorOf([&] { ParseJson(many + R"("k3": 0}})", "t.json"); }),
                  "t.json: /m/k3: duplicate key \"k3\"");
  EXPECT_CONTAINS(ErrorOf([&] { ParseJson(many + R"("k39": 0}})", "t.json"); }),
                  "t.json: /m/k39: duplicate key");
  EXPECT_NO_THROW(
      ParseJson(R"({"l": [{"a": 1, "b": 2}, {"a": 1, "b": 2}, [{"a": [1]}]], "a": 0})", "t.json"));
  EXPECT_CONTAINS(ErrorOf([] { ParseJson(R"({"l": [{"a": 1}, {"b": 1, "b": 2}]})", "t.json"); }),
                  "t.json: /l/1/b: duplicate key");
}

TEST_F(InputFiles, ValueCountIsLimited) {
  Limits l;
  l.max_json_values = 5;
  EXPECT_NO_THROW(ParseJson(R"({"a": [1, 2, 3]})", "t.json", l));
  EXPECT_CONTAINS(ErrorOf([&] { ParseJson(R"({"a": [1, 2, 3, 4, 5]})", "t.json", l); }),
                  "t.json: /a/3: more than 5 JSON values in one file");
}

// Graph text with one node, for the size-arithmetic cases.
std::string OneNode(const std::string& node, const std::string& shape = "[1, 3, 4, 4]") {
  return R"({"format": "fusefuzz-graph", "version": 1, "inputs": [{"name": "x", "shape": )" +
         shape + R"(}], "nodes": [)" + node + R"(], "outputs": ["y"]})";
}

std::string Conv3x3(const std::string& attrs) {
  return R"({"name": "c", "op": "Conv", "inputs": ["x"], "outputs": ["y"], "attrs": )" + attrs +
         R"(, "params": {"W": {"shape": [1, 3, 3, 3], "b64": ")" + std::string(144, 'A') +
         R"("}}})";
}

TEST_F(InputFiles, ConvDilationOverflowIsRefused) {
  // dilation * (3 - 1) overflows int64: was accepted with output [1,1,3,2] (undefined behaviour).
  std::string e = ErrorOf(
      [] { ParseGraph(OneNode(Conv3x3(R"({"dilations": [9223372036854775807, 1]})")), "g.json"); });
  EXPECT_CONTAINS(e,
                  "g.json: /nodes/0: node 'c' (Conv): height: the dilated kernel or the padded "
                  "input does not fit in a 64-bit integer");
  e = ErrorOf([] {
    ParseGraph(OneNode(Conv3x3(R"({"pads": [0, 9223372036854775807, 0, 9223372036854775807]})")),
               "g.json");
  });
  EXPECT_CONTAINS(e, "width: the dilated kernel or the padded input does not fit");
  EXPECT_FALSE(CheckedConvOutputSize(4, 3, 1, INT64_MAX, 0, 0).has_value());
  EXPECT_EQ(ConvOutputSize(4, 3, 1, INT64_MAX, 0, 0), 0);
  EXPECT_EQ(*CheckedConvOutputSize(4, 3, 1, 1, 1, 1), 4);
}

TEST_F(InputFiles, PoolHugeStrideWithCeilModeHasTheExactSize) {
  // (avail + stride - 1) overflowed and gave "kernel 2x2 does not fit input [1,3,4,4]"; the
  // exact answer is one window per axis.
  Graph g = ParseGraph(OneNode(R"({"name": "p", "op": "MaxPool", "inputs": ["x"],
      "outputs": ["y"], "attrs": {"kernel_shape": [2, 2], "ceil_mode": 1,
      "strides": [9223372036854775807, 9223372036854775807]}})"),
                       "g.json");
  EXPECT_EQ(VerifyGraph(g).at("y"), (Shape{1, 3, 1, 1}));
  EXPECT_EQ(*CheckedPoolOutputSize(4, 2, INT64_MAX, 0, 0, true), 1);
  EXPECT_EQ(*CheckedPoolOutputSize(5, 2, 2, 0, 0, true), 3);  // unchanged for ordinary sizes
  // Pads are below the kernel, but kernel + pads can still overflow.
  std::string e = ErrorOf([] {
    ParseGraph(OneNode(R"({"name": "p", "op": "MaxPool", "inputs": ["x"], "outputs": ["y"],
        "attrs": {"kernel_shape": [9223372036854775807, 1],
                  "pads": [9223372036854775806, 0, 9223372036854775806, 0]}})"),
               "g.json");
  });
  EXPECT_CONTAINS(e,
                  "node 'p' (MaxPool): height: the dilated window or the padded input does not fit "
                  "in a 64-bit");
}

TEST_F(InputFiles, PoolFlagsMustBeZeroOrOne) {
  auto pool = [](const std::string& op, const std::string& attr) {
    return OneNode(R"({"name": "p", "op": ")" + op +
                   R"(", "inputs": ["x"], "outputs": ["y"], "attrs": {"kernel_shape": [2, 2], )" +
                   attr + "}}");
  };
  EXPECT_CONTAINS(ErrorOf([&] { ParseGraph(pool("MaxPool", R"("ceil_mode": 2)"), "g.json"); }),
                  "g.json: /nodes/0: node 'p' (MaxPool): ceil_mode must be 0 or 1, got 2");
  EXPECT_CONTAINS(ErrorOf([&] { ParseGraph(pool("AvgPool", R"("ceil_mode": -1)"), "g.json"); }),
                  "ceil_mode must be 0 or 1, got -1");
  EXPECT_CONTAINS(
      ErrorOf([&] { ParseGraph(pool("AvgPool", R"("count_include_pad": 7)"), "g.json"); }),
      "node 'p' (AvgPool): count_include_pad must be 0 or 1, got 7");
  EXPECT_NO_THROW(ParseGraph(pool("AvgPool", R"("ceil_mode": 1, "count_include_pad": 1)"), "g"));
}

TEST_F(InputFiles, TensorsFileExtraTensorIsRefusedByName) {
  Graph g = ParseGraph(
      OneNode(R"({"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["y"]})", "[1, 2]"));
  TensorMap ok =
      ReadTensors(ParseJson(R"({"x": {"shape": [1, 2], "data": [1, 2]}})", "in.json"), "in.json");
  EXPECT_NO_THROW(CheckTensorsForGraph(g, ok, "in.json"));
  TensorMap extra = ok;
  extra["x2"] = Tensor({1}, 0.0f);
  EXPECT_CONTAINS(ErrorOf([&] { CheckTensorsForGraph(g, extra, "in.json"); }),
                  "in.json: /x2: tensor \"x2\" is not an input of the graph (inputs: x)");
  TensorMap wrong = {{"x", Tensor({2, 1}, 0.0f)}};
  EXPECT_CONTAINS(ErrorOf([&] { CheckTensorsForGraph(g, wrong, "in.json", "/inputs"); }),
                  "in.json: /inputs/x/shape: shape [2,1] differs from graph input \"x\" [1,2]");
  EXPECT_CONTAINS(ErrorOf([&] { CheckTensorsForGraph(g, {}, "in.json"); }),
                  "in.json: /: no tensor for graph input \"x\"");
}

TEST_F(InputFiles, DotEscapesControlCharactersQuotesAndBackslashesInNames) {
  // JSON allows any character in a name when escaped: NUL, newline, quote, backslash.
  Graph g = ParseGraph(OneNode(
      R"({"name": "a\u0000b\nc\"d\\e\u007f", "op": "Relu", "inputs": ["x"], "outputs": ["y"]})"));
  std::string dot = ToDot(g);
  EXPECT_CONTAINS(dot, R"(label="a\\x00b\\x0ac\"d\\e\\x7f\nRelu")");
  for (char c : dot) {
    auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (b >= 0x20 && b != 0x7f)) << "raw byte " << int(b) << " in\n" << dot;
  }
}

}  // namespace
}  // namespace fusefuzz
