// Reading untrusted files (docs/security.md, "Input files"): every reader of fusefuzz opens its
// file here, so that a FIFO, a device or a folder is refused the same way everywhere and no read
// grows past its limit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace fusefuzz {

struct ReadFileOptions {
  int64_t max_bytes = int64_t{1} << 30;  // Limits::max_file_bytes
  // false: a symlink is refused instead of followed (files inside an output folder, which an
  // earlier run or someone else may have planted).
  bool follow_links = true;
  // Called after each piece is read with the bytes so far and where the new piece starts;
  // throws InputError to stop reading (an impossible first byte, a control character, ...).
  std::function<void(const std::string& bytes, size_t from)> check;
};

// The whole file. Opened non-blocking (a FIFO without a writer never blocks), then its type is
// checked on the open descriptor: only a regular file is read. A folder is "is a directory"; a
// FIFO, socket or device (/dev/zero) is refused naming its kind. A file larger than max_bytes is
// refused before its first byte is read, and the read stops at the limit if it grows meanwhile.
// Every refusal is an InputError naming the path.
std::string ReadRegularFile(const std::string& path, const ReadFileOptions& options = {});

// "1073741824 bytes (1 GiB)", "1000 bytes": a size limit as messages state it.
std::string ByteSizeText(int64_t bytes);

}  // namespace fusefuzz
