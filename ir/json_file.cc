// Reading untrusted JSON files: which files are read at all, how much of them, and the checks
// that need the parser's events (duplicate keys, value count). docs/security.md, "Input files".
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>
#include <vector>

#include "ir/error.h"
#include "ir/json_internal.h"
#include "ir/read_file.h"

namespace fusefuzz::json_detail {
namespace {

using nlohmann::json;

std::string ByteText(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

bool IsJsonSpace(unsigned char b) { return b == ' ' || b == '\t' || b == '\n' || b == '\r'; }

// Checks the bytes [from, text.size()) of the text read so far. `seen_start`: the first
// non-space byte has been checked.
void CheckBytes(const std::string& path, const std::string& text, size_t from, bool* seen_start) {
  for (size_t i = from; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    // RFC 8259: control characters may not appear unescaped anywhere, not even in strings.
    if (b < 0x20 && !IsJsonSpace(b)) {
      // An ONNX model starts with field 1 (ir_version, tag 0x08): say which command reads it.
      const bool onnx = (i == 0 && b == 0x08) || (path.size() >= 5 && path.ends_with(".onnx"));
      throw InputError(path, "byte " + std::to_string(i) + " is " + ByteText(b) +
                                 ", a control character, which cannot occur in a JSON text " +
                                 (onnx ? std::string("(is this an ONNX model? `fusefuzz check "
                                                     "MODEL.onnx` checks one whole; `fusefuzz "
                                                     "import MODEL.onnx -o graph.json` converts "
                                                     "it, `import --cut` when it holds ops "
                                                     "fusefuzz does not model)")
                                       : std::string("(is this a binary file?)")));
    }
    if (*seen_start || IsJsonSpace(b)) continue;
    // A UTF-8 byte order mark is tolerated, as the parser does.
    if (i == 0 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) {
      i += 2;
      continue;
    }
    if (b != '{') {
      std::string shown =
          b >= 0x20 && b < 0x7f ? "'" + std::string(1, static_cast<char>(b)) + "'" : ByteText(b);
      throw InputError(path, "byte " + std::to_string(i) + " is " + shown +
                                 ": a fusefuzz file (graph, tensors, reproducer, config) is a "
                                 "JSON object and starts with '{'");
    }
    *seen_start = true;
  }
}

// A SAX pass over a document before it is parsed into a tree: the JSON pointer of the current
// value, the keys of every open object, and the number of values so far. (A DOM parse with a
// parser callback did this before; nlohmann's callback parser scans the whole enclosing array
// after each object in it, quadratic in its length: a summary.json of 250k findings took 33 s.)
class Checker : public json::json_sax_t {
 public:
  Checker(std::string source, int64_t max_values)
      : source_(std::move(source)), max_values_(max_values) {}

  bool null() override { return Count(); }
  bool boolean(bool) override { return Count(); }
  bool number_integer(number_integer_t) override { return Count(); }
  bool number_unsigned(number_unsigned_t) override { return Count(); }
  bool number_float(number_float_t, const string_t&) override { return Count(); }
  bool string(string_t&) override { return Count(); }
  bool binary(binary_t&) override { return Count(); }
  bool start_object(std::size_t) override { return Open(true); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& k) override {
    Frame& f = frames_[depth_ - 1];
    f.key = k;
    if (!f.Insert(k)) {
      throw InputError(source_ + ": " + Pointer(),
                       "duplicate key " + Quote(f.key) +
                           " (a JSON object must not repeat a key; which one would count "
                           "is not defined)");
    }
    return true;
  }
  // A syntax error stops the pass; the parse that follows reports it with its position.
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // Frames are reused, not freed, as objects close: a summary or tensor file opens hundreds of
  // thousands of small objects. An object's keys are searched linearly until it has many.
  struct Frame {
    bool object = false;
    std::string key;    // object: the current key
    int64_t index = 0;  // array: the current element
    std::vector<std::string> few;
    std::unordered_set<std::string> many;

    bool Insert(const std::string& k) {
      if (few.size() < 16) {
        for (const std::string& seen : few)
          if (seen == k) return false;
        few.push_back(k);
        return true;
      }
      if (many.empty()) many.insert(few.begin(), few.end());
      return many.insert(k).second;
    }
  };

  bool Open(bool object) {
    Count();
    if (depth_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[depth_++];
    f.object = object;
    f.index = -1;
    f.few.clear();
    f.many.clear();
    return true;
  }
  bool Close() {
    if (depth_ > 0) --depth_;
    return true;
  }

  bool Count() {
    if (depth_ > 0 && !frames_[depth_ - 1].object) ++frames_[depth_ - 1].index;
    if (++values_ > max_values_) {
      throw InputError(source_ + ": " + Pointer(),
                       "more than " + std::to_string(max_values_) +
                           " JSON values in one file (limit; store large tensors as \"b64\")");
    }
    return true;
  }

  std::string Pointer() const {
    std::string p;
    for (size_t i = 0; i < depth_; ++i) {
      const Frame& f = frames_[i];
      p += "/" + (f.object ? Escape(f.key) : std::to_string(f.index));
    }
    return p.empty() ? "/" : p;
  }

  std::string source_;
  int64_t max_values_;
  int64_t values_ = 0;
  std::vector<Frame> frames_;
  size_t depth_ = 0;  // frames_[0, depth_) are open
};

}  // namespace

std::string ReadJsonText(const std::string& path, const Limits& limits) {
  ReadFileOptions o;
  o.max_bytes = limits.max_file_bytes;
  auto seen_start = std::make_shared<bool>(false);
  o.check = [&path, seen_start](const std::string& text, size_t from) {
    CheckBytes(path, text, from, seen_start.get());
  };
  return ReadRegularFile(path, o);
}

bool CheckDocument(const std::string& text, const std::string& source, const Limits& limits) {
  Checker checker(source, limits.max_json_values);
  return json::sax_parse(text, &checker);
}

}  // namespace fusefuzz::json_detail
