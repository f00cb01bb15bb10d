// ReadRegularFile (ir/read_file.h): the one place fusefuzz opens a file to read it.
#include "ir/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ir/error.h"

namespace fusefuzz {
namespace {

// Read in pieces so that a check can stop the read early: a 1 GB file of NUL bytes is refused
// after the first piece, not after 1 GB of memory.
constexpr size_t kChunk = size_t{1} << 20;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
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

}  // namespace

std::string ByteSizeText(int64_t bytes) {
  std::string s = std::to_string(bytes) + " bytes";
  if (bytes > 0 && bytes % (int64_t{1} << 30) == 0)
    return s + " (" + std::to_string(bytes >> 30) + " GiB)";
  if (bytes > 0 && bytes % (int64_t{1} << 20) == 0)
    return s + " (" + std::to_string(bytes >> 20) + " MiB)";
  return s;
}

std::string ReadRegularFile(const std::string& path, const ReadFileOptions& o) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever. The file
  // type is then checked on the open descriptor, not on the name (no race with a rename).
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (!o.follow_links) flags |= O_NOFOLLOW;
  Fd fd(::open(path.c_str(), flags));
  if (fd.get() < 0) {
    if (!o.follow_links && errno == ELOOP) {
      throw InputError(path,
                       "cannot read file: it is a symlink (not followed inside an output "
                       "folder)");
    }
    throw InputError(path, std::string("cannot open file: ") + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw InputError(path, std::string("cannot open file: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw InputError(path, "cannot read file: is a directory");
  if (!S_ISREG(st.st_mode)) {
    throw InputError(path, "cannot read file: it is " + FileKind(st.st_mode) +
                               "; fusefuzz reads only regular files (copy the data to a file)");
  }
  if (st.st_size > o.max_bytes) {
    throw InputError(path, "file is " + std::to_string(st.st_size) +
                               " bytes, larger than the limit of " + ByteSizeText(o.max_bytes));
  }
  std::string bytes;
  bytes.reserve(static_cast<size_t>(std::min<int64_t>(st.st_size, o.max_bytes)));
  for (;;) {
    const size_t old = bytes.size();
    // The file may grow while we read: never read more than the limit (plus one byte to know).
    const size_t room = static_cast<size_t>(o.max_bytes) + 1 - old;
    if (room == 0) {
      throw InputError(
          path, "file grew beyond the limit of " + ByteSizeText(o.max_bytes) + " while read");
    }
    bytes.resize(old + std::min(kChunk, room));
    ssize_t n = ::read(fd.get(), bytes.data() + old, bytes.size() - old);
    if (n < 0 && errno == EINTR) {
      bytes.resize(old);
      continue;
    }
    if (n < 0) throw InputError(path, std::string("cannot read file: ") + std::strerror(errno));
    bytes.resize(old + static_cast<size_t>(n));
    if (n == 0) break;
    if (o.check) o.check(bytes, old);
  }
  return bytes;
}

}  // namespace fusefuzz
