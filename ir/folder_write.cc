// WriteFileInFolder and friends (ir/folder_write.h): every path inside the folder is walked with
// openat(O_NOFOLLOW | O_DIRECTORY), one component at a time, so a planted symlink anywhere in
// it is seen, not followed.
#include "ir/folder_write.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "ir/error.h"

namespace fusefuzz {
namespace {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(-1); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

[[noreturn]] void Fail(const std::string& path, const std::string& what, int err) {
  throw OutputError(path, what + ": " + std::strerror(err));
}

std::vector<std::string> Components(const std::string& relative) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= relative.size()) {
    size_t slash = relative.find('/', start);
    if (slash == std::string::npos) slash = relative.size();
    std::string part = relative.substr(start, slash - start);
    if (part == "..") throw std::logic_error("folder_write: '..' in " + relative);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = slash + 1;
  }
  if (parts.empty()) throw std::logic_error("folder_write: empty relative path");
  return parts;
}

std::string Join(const std::string& root, const std::vector<std::string>& parts, size_t n) {
  std::string p = root;
  for (size_t i = 0; i < n; ++i) p += "/" + parts[i];
  return p;
}

// Opens the folder `name` in `dir` without following a symlink; creates it when `create`.
int OpenSubfolder(int dir, const std::string& name, const std::string& shown, bool create) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) return fd;
    const int err = errno;
    if (err == ENOENT && create && attempt == 0) {
      if (::mkdirat(dir, name.c_str(), 0755) != 0 && errno != EEXIST) {
        Fail(shown, "cannot create the folder", errno);
      }
      continue;
    }
    if (err == ELOOP || err == ENOTDIR) {
      struct stat st {};
      const bool link =
          ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      throw OutputError(shown, link ? "is a symlink inside the output folder; fusefuzz does not "
                                      "write through a link it did not make (remove it)"
                                    : "is not a folder");
    }
    Fail(shown, "cannot open the folder", err);
  }
  Fail(shown, "cannot open the folder", ENOENT);
}

int OpenRoot(const std::string& root) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) Fail(root, "cannot open the folder", errno);
  return fd;
}

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

std::string TempName(const std::string& name) {
  static std::atomic<uint64_t> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return "." + name.substr(0, 100) + ".tmp" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++) + "-" + std::to_string(now % 1000000);
}

bool RemoveAt(int dir, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
  if (!S_ISDIR(st.st_mode)) return ::unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT;
  int sub = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0) return false;
  std::vector<std::string> names;
  {
    int again = ::dup(sub);
    DIR* d = again >= 0 ? ::fdopendir(again) : nullptr;
    if (!d) {
      if (again >= 0) ::close(again);
      ::close(sub);
      return false;
    }
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  bool ok = true;
  for (const std::string& n : names) ok = RemoveAt(sub, n) && ok;
  ::close(sub);
  return ok && (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT);
}

}  // namespace

void WriteFileInFolder(const std::string& root, const std::string& relative,
                       const std::string& content) {
  const std::vector<std::string> parts = Components(relative);
  const std::string shown = Join(root, parts, parts.size());
  const std::string& name = parts.back();
  Fd dir;
  {
    Fd walk(OpenRoot(root));
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      walk.Reset(OpenSubfolder(walk.get(), parts[i], Join(root, parts, i + 1), false));
    }
    dir.Reset(::dup(walk.get()));
    if (dir.get() < 0) Fail(shown, "cannot write", errno);
  }
  struct stat st {};
  if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
    throw OutputError(shown, "is a folder, not a file");
  }
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = TempName(name);
    // O_EXCL | O_NOFOLLOW: a name someone planted meanwhile is never opened.
    fd = ::openat(dir.get(), tmp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd < 0 && errno != EEXIST) Fail(shown, "cannot create a temp file beside it", errno);
  }
  if (fd < 0) Fail(shown, "cannot create a temp file beside it", EEXIST);
  int err = WriteAll(fd, content);
  if (err == 0 && ::fchmod(fd, 0644) != 0) err = errno;  // whatever the umask made of it
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  // renameat replaces the directory entry `name`: a symlink there is replaced, not followed.
  if (err == 0 && ::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    Fail(shown, err == EISDIR ? "is a folder, not a file" : "cannot write", err);
  }
}

void MakeFolderIn(const std::string& root, const std::string& relative) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) throw OutputError(root, "cannot create the folder: " + ec.message());
  const std::vector<std::string> parts = Components(relative);
  Fd dir(OpenRoot(root));
  for (size_t i = 0; i < parts.size(); ++i) {
    dir.Reset(OpenSubfolder(dir.get(), parts[i], Join(root, parts, i + 1), true));
  }
}

bool IsFolderIn(const std::string& root, const std::string& relative) {
  try {
    const std::vector<std::string> parts = Components(relative);
    Fd dir(OpenRoot(root));
    for (size_t i = 0; i < parts.size(); ++i) {
      dir.Reset(OpenSubfolder(dir.get(), parts[i], Join(root, parts, i + 1), false));
    }
    return true;
  } catch (const OutputError&) {
    return false;
  }
}

bool RemoveIn(const std::string& root, const std::string& relative) {
  const std::vector<std::string> parts = Components(relative);
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  Fd dir(fd);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int sub =
        ::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) return errno == ENOENT;  // nothing there to remove (a link is not followed)
    dir.Reset(sub);
  }
  return RemoveAt(dir.get(), parts.back());
}

}  // namespace fusefuzz
