#include "fuzz/fuzz_inputs.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fusefuzz::fuzz {
namespace {

// splitmix64: a tiny deterministic generator, identical on every compiler.
struct Mix {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
};

// A few libFuzzer-like mutations of `base`: flip, overwrite, insert, erase, duplicate, truncate.
std::vector<uint8_t> Mutate(std::vector<uint8_t> b, Mix& rng, size_t max_len) {
  const int rounds = 1 + static_cast<int>(rng.Below(4));
  static constexpr char kTokens[][8] = {"{",    "}",   "[",    "]",       "\"",
                                        ":",    ",",   "-1",   "1e308",   "0",
                                        "null", "nan", "true", "\"b64\"", "99999"};
  for (int r = 0; r < rounds; ++r) {
    size_t pos = rng.Below(b.size() + 1);
    switch (rng.Below(6)) {
      case 0:
        if (!b.empty()) b[pos % b.size()] ^= static_cast<uint8_t>(1u << rng.Below(8));
        break;
      case 1:
        if (!b.empty()) b[pos % b.size()] = static_cast<uint8_t>(rng.Next());
        break;
      case 2: {
        const char* t = kTokens[rng.Below(std::size(kTokens))];
        b.insert(b.begin() + static_cast<ptrdiff_t>(pos), t, t + std::strlen(t));
        break;
      }
      case 3: {
        size_t n = std::min(b.size() - pos, rng.Below(16) + 1);
        b.erase(b.begin() + static_cast<ptrdiff_t>(pos),
                b.begin() + static_cast<ptrdiff_t>(pos + n));
        break;
      }
      case 4: {
        size_t n = std::min(b.size() - pos, rng.Below(64) + 1);
        std::vector<uint8_t> chunk(b.begin() + static_cast<ptrdiff_t>(pos),
                                   b.begin() + static_cast<ptrdiff_t>(pos + n));
        b.insert(b.begin() + static_cast<ptrdiff_t>(rng.Below(b.size() + 1)), chunk.begin(),
                 chunk.end());
        break;
      }
      default:
        b.resize(pos);
        break;
    }
  }
  if (b.size() > max_len) b.resize(max_len);
  return b;
}

uint32_t Rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

}  // namespace

bool ParseInputOptions(int argc, char** argv, int first, InputOptions& o, std::string& error) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](uint64_t& out) {
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return false;
      }
      char* end = nullptr;
      out = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0') {
        error = a + ": not a number: " + argv[i];
        return false;
      }
      return true;
    };
    uint64_t v = 0;
    if (a == "--random") {
      if (!value(v)) return false;
      o.random = static_cast<int64_t>(v);
    } else if (a == "--seed") {
      if (!value(o.seed)) return false;
    } else if (a == "--max-len") {
      if (!value(v)) return false;
      o.max_len = static_cast<size_t>(v);
    } else if (a == "--dump") {
      if (i + 1 >= argc) {
        error = a + " needs a folder";
        return false;
      }
      o.dump = argv[++i];
    } else if (a.starts_with("-")) {
      // libFuzzer flags (-runs=, -dict=, ...) are accepted and ignored, as by libFuzzer's own
      // standalone drivers, so scripts can pass the same command line to both.
      if (a.starts_with("--")) {
        error = "unknown option " + a;
        return false;
      }
    } else {
      o.paths.push_back(a);
    }
  }
  return true;
}

bool ReadBytes(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

int64_t ForEachInput(
    const InputOptions& o,
    const std::function<void(const std::string&, const std::vector<uint8_t>&)>& fn) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : o.paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file()) found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  int64_t n = 0;
  std::vector<std::vector<uint8_t>> bases;
  for (const auto& f : files) {
    std::vector<uint8_t> bytes;
    if (!ReadBytes(f, bytes)) {
      std::fprintf(stderr, "cannot read %s\n", f.c_str());
      return -1;
    }
    if (!o.generated_only) {
      fn(f, bytes);
      ++n;
    }
    if (o.random > 0) bases.push_back(std::move(bytes));
  }
  Mix rng{o.seed};
  for (int64_t i = 0; i < o.random; ++i) {
    std::vector<uint8_t> bytes;
    if (bases.empty()) {
      bytes.resize(rng.Below(o.max_len + 1));
      for (auto& b : bytes) b = static_cast<uint8_t>(rng.Next());
    } else {
      bytes = Mutate(bases[rng.Below(bases.size())], rng, o.max_len);
    }
    fn("random-" + std::to_string(i), bytes);
    ++n;
  }
  return n;
}

std::string Sha1Hex(const uint8_t* data, size_t size) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::vector<uint8_t> m(data, data + size);
  const uint64_t bits = static_cast<uint64_t>(size) * 8;
  m.push_back(0x80);
  while (m.size() % 64 != 56) m.push_back(0);
  for (int i = 7; i >= 0; --i) m.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  for (size_t off = 0; off < m.size(); off += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      const uint8_t* p = &m[off + 4 * static_cast<size_t>(i)];
      w[i] = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    }
    for (int i = 16; i < 80; ++i) w[i] = Rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20) {
        f = (b & c) | (~b & d), k = 0x5A827999;
      } else if (i < 40) {
        f = b ^ c ^ d, k = 0x6ED9EBA1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      } else {
        f = b ^ c ^ d, k = 0xCA62C1D6;
      }
      uint32_t t = Rol(a, 5) + f + e + k + w[i];
      e = d, d = c, c = Rol(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  char out[41];
  for (int i = 0; i < 5; ++i) std::snprintf(out + 8 * i, 9, "%08x", h[i]);
  return std::string(out, 40);
}

}  // namespace fusefuzz::fuzz
