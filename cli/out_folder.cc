// One place for what commands write when not told (DefaultOut) and one rule for a folder that a
// command fills with a fixed set of files (PrepareOutFolder): see cli/cli.h.
#include <filesystem>
#include <string>

#include "cli/cli.h"
#include "ir/error.h"

namespace fusefuzz {

namespace fs = std::filesystem;

std::string DefaultOut(const std::string& command) { return "out/" + command; }

void PrepareOutFolder(const std::string& dir, bool force, const std::string& own_input,
                      const std::string& command) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(dir, ec)) && !fs::exists(dir, ec)) {
    throw InputError("--out", "'" + dir + "' is a symlink to a folder that does not exist");
  }
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw InputError("--out", "'" + dir + "' exists and is not a folder");
  }
  fs::create_directories(dir, ec);
  if (ec) throw InputError("--out", "cannot create folder '" + dir + "': " + ec.message());
  if (force) return;
  // The input's own folder is the folder being re-tabulated, not someone else's results.
  if (!own_input.empty() &&
      fs::equivalent(fs::path(own_input).parent_path().empty() ? fs::path(".")
                                                               : fs::path(own_input).parent_path(),
                     dir, ec)) {
    return;
  }
  bool empty = true;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    empty = false;
    break;
  }
  if (ec) throw InputError("--out", "cannot list '" + dir + "': " + ec.message());
  if (!empty) {
    throw InputError("--out", "'" + dir + "' is not empty (a previous `fusefuzz " + command +
                                  "`?): give --force to overwrite its files, or another --out");
  }
}

}  // namespace fusefuzz
