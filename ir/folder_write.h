// Writing inside an output folder that may hold what someone else put there (a campaign's --out
// on --resume, a finding folder given to `minimize --folder`, `export -o DIR`): docs/security.md,
// "Output". The folder itself is the user's (a symlink to it is followed, as for `-o FILE`);
// inside it fusefuzz creates, replaces (rename) or refuses, and never writes through a link it
// did not make.
#pragma once

#include <string>

namespace fusefuzz {

// Writes `content` to ROOT/RELATIVE atomically (temp file beside it, fsync, rename). Each folder
// of RELATIVE's parent must be a real folder (a symlink, file or missing folder is refused:
// OutputError naming it); the file's own name is replaced by the rename whatever it was (a
// symlink is replaced, not followed; a FIFO or device is replaced, not written into), except a
// folder, which is refused. Every failure throws OutputError naming ROOT/RELATIVE; no temp file
// is left behind.
void WriteFileInFolder(const std::string& root, const std::string& relative,
                       const std::string& content);

// Creates the folders of ROOT/RELATIVE that are missing (mode 0755; ROOT itself with its
// parents). An existing component must be a real folder, not a symlink: refused otherwise.
void MakeFolderIn(const std::string& root, const std::string& relative);

// Whether ROOT/RELATIVE is a real folder inside ROOT (no component of RELATIVE is a symlink).
bool IsFolderIn(const std::string& root, const std::string& relative);

// Removes ROOT/RELATIVE (a file, a link, or a folder with what it holds) without following any
// link inside ROOT. Missing is fine. Returns false (errno set) when something could not go.
bool RemoveIn(const std::string& root, const std::string& relative);

}  // namespace fusefuzz
