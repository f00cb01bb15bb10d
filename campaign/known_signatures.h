// --known: the signatures of findings filed before, counted as known instead of new
// (docs/campaign.md). A list can hold hundreds of thousands of them, so the set is read once into
// one hash table over one buffer and shared, not copied, by the campaign, its forked workers
// and every filing: a copy of a node-based set of 500k strings per worker cost seconds.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fusefuzz {

// What Signature() produces: [A-Za-z0-9._-], no leading dot, at most 100 characters (a folder
// name). Signatures read from files (summaries, --known) are checked with this.
bool LooksLikeSignature(std::string_view sig);

class KnownSignatures {
 public:
  KnownSignatures() = default;
  // Each must pass LooksLikeSignature (checked by the readers, not here); repeats count once.
  explicit KnownSignatures(const std::vector<std::string>& signatures);
  // The signatures at `spans` (offset, length) of `bytes`, which the set keeps.
  KnownSignatures(std::string bytes, const std::vector<std::pair<size_t, size_t>>& spans);

  bool contains(std::string_view sig) const;
  size_t size() const { return data_ ? data_->count : 0; }
  bool empty() const { return size() == 0; }

 private:
  // An open-addressing hash table of views into `bytes` (empty view: a free slot), at most half
  // full: no allocation per signature, and a lookup touches one or two slots.
  struct Data {
    std::string bytes;
    std::vector<std::string_view> slots;
    size_t count = 0;
  };
  std::shared_ptr<const Data> data_;
};

// A campaign's summary.json (its unique_findings), a campaign folder holding one, or a text file
// with one signature per line ('#' starts a comment). Read through ReadRegularFile (no FIFO,
// device or folder; at most 64 MiB). Throws InputError naming the file and line or JSON pointer.
KnownSignatures ReadKnownSignatures(const std::string& path);

}  // namespace fusefuzz
