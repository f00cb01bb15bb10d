// WriteFileAtomic (declared in ir/json_io.h): every file fusefuzz writes goes through here.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "ir/error.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Fail(const std::string& path, const std::string& what, int err) {
  throw OutputError(path, what + ": " + std::strerror(err));
}

// Writes all of `content` to `fd`; returns 0 or the errno of the failure.
int WriteAll(int fd, const std::string& content) {
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    if (w == 0) return EIO;
    p += w;
    left -= static_cast<size_t>(w);
  }
  return 0;
}

// The file a chain of symlinks ends at (the path itself when it is not a symlink). A dangling
// link resolves to the missing file it names, which is then created.
std::string FollowLinks(const std::string& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {  // 40: the kernel's own limit (ELOOP)
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    std::error_code ec;
    fs::path target = fs::read_symlink(p, ec);
    if (ec) throw OutputError(path, "cannot read the symlink: " + ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  throw OutputError(path, "too many levels of symbolic links");
}

// A character device or FIFO: there is nothing to replace, so write straight into it and
// report every error (/dev/full gives ENOSPC).
void WriteDirect(const std::string& shown, const std::string& path, const std::string& content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) Fail(shown, "cannot open for writing", errno);
  int err = WriteAll(fd, content);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) Fail(shown, "cannot write", err);
}

}  // namespace

void WriteFileAtomic(const std::string& shown, const std::string& content) {
  // Writing through a symlink replaces its target and keeps the link (as `>` in a shell does).
  const std::string path = FollowLinks(shown);
  struct stat st {};
  mode_t mode = 0644;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return WriteDirect(shown, path, content);
    if (!S_ISREG(st.st_mode)) {
      throw OutputError(shown, S_ISDIR(st.st_mode)
                                   ? "is a folder, not a file"
                                   : "exists and is not a regular file (refusing to replace it)");
    }
    mode = st.st_mode & 07777;  // keep the permissions of the file being replaced
  } else if (errno != ENOENT) {
    Fail(shown, "cannot write", errno);
  }
  std::string tmp = path + ".tmpXXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) Fail(shown, "cannot create a temp file beside it", errno);
  int err = WriteAll(fd, content);
  // mkstemp creates 0600; give the file the usual (or its previous) permissions.
  if (err == 0 && ::fchmod(fd, mode) != 0) err = errno;
  // fsync before rename: after a power loss the name must not point at an empty file. Its
  // errors (EIO, ENOSPC on some file systems) are write errors like any other.
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    Fail(shown, "cannot write", err);
  }
}

}  // namespace fusefuzz
