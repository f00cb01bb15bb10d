// Reading untrusted JSON files: which files are read at all, how much of them, and the checks
// that need the parser's events (duplicate keys, value count). docs/security.md, "Input files".
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>
#include <vector>

#include "ir/error.h"
#include "ir/json_internal.h"

namespace fusefuzz::json_detail {
namespace {

using nlohmann::json;

// Read in pieces so that an impossible byte stops the read early: a 1 GB file of NUL bytes is
// refused after the first piece, not after 1 GB of memory and a full parse.
constexpr size_t kChunk = size_t{1} << 20;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string FileKind(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

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
      throw InputError(path, "byte " + std::to_string(i) + " is " + ByteText(b) +
                                 ", a control character, which cannot occur in a JSON text "
                                 "(is this a binary file?)");
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

// Parser events -> JSON pointer of the current value, the keys of every open object, and the
// number of values so far.
class Checker {
 public:
  Checker(std::string source, int64_t max_values)
      : source_(std::move(source)), max_values_(max_values) {}

  bool Event(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        Count();
        frames_.push_back({event == json::parse_event_t::object_start, {}, -1, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw InputError(source_ + ": " + Pointer(),
                           "duplicate key " + Quote(f.key) +
                               " (a JSON object must not repeat a key; which one would count "
                               "is not defined)");
        }
        break;
      }
      case json::parse_event_t::value:
        Count();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::string key;  // object: the current key
    int64_t index;    // array: the current element
    std::unordered_set<std::string> keys;
  };

  // A new value starts: it is the next element of an enclosing array.
  void Count() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    if (++values_ > max_values_) {
      throw InputError(source_ + ": " + Pointer(),
                       "more than " + std::to_string(max_values_) +
                           " JSON values in one file (limit; store large tensors as \"b64\")");
    }
  }

  std::string Pointer() const {
    std::string p;
    for (const Frame& f : frames_) {
      p += "/" + (f.object ? Escape(f.key) : std::to_string(f.index));
    }
    return p.empty() ? "/" : p;
  }

  std::string source_;
  int64_t max_values_;
  int64_t values_ = 0;
  std::vector<Frame> frames_;
};

}  // namespace

std::string ReadJsonText(const std::string& path, const Limits& limits) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever. The file
  // type is then checked on the open descriptor, not on the name (no race with a rename).
  Fd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0)
    throw InputError(path, std::string("cannot open file: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) {
    throw InputError(path, std::string("cannot open file: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw InputError(path, "cannot read file: is a directory");
  if (!S_ISREG(st.st_mode)) {
    throw InputError(path, "cannot read file: it is " + FileKind(st.st_mode) +
                               "; fusefuzz reads only regular files (copy the data to a file)");
  }
  if (st.st_size > limits.max_file_bytes) {
    throw InputError(path, "file is " + std::to_string(st.st_size) +
                               " bytes, larger than the limit of " +
                               std::to_string(limits.max_file_bytes) + " bytes");
  }
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  bool seen_start = false;
  for (;;) {
    size_t old = text.size();
    // The file may grow while we read: never read more than the limit (plus one byte to know).
    size_t room = static_cast<size_t>(limits.max_file_bytes) + 1 - old;
    if (room == 0) {
      throw InputError(path, "file grew beyond the limit of " +
                                 std::to_string(limits.max_file_bytes) + " bytes while read");
    }
    text.resize(old + std::min(kChunk, room));
    ssize_t n = read(fd.get(), text.data() + old, text.size() - old);
    if (n < 0 && errno == EINTR) {
      text.resize(old);
      continue;
    }
    if (n < 0) throw InputError(path, std::string("cannot read file: ") + std::strerror(errno));
    text.resize(old + static_cast<size_t>(n));
    if (n == 0) break;
    CheckBytes(path, text, old, &seen_start);
  }
  return text;
}

json::parser_callback_t DocumentChecker(const std::string& source, const Limits& limits) {
  auto checker = std::make_shared<Checker>(source, limits.max_json_values);
  return [checker](int /*depth*/, json::parse_event_t event, json& parsed) {
    return checker->Event(event, parsed);
  };
}

}  // namespace fusefuzz::json_detail
