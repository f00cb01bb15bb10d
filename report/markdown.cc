#include "report/markdown.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace fusefuzz {
namespace {

std::string Hex(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", b);
  return buf;
}

bool IsControl(unsigned char b) { return b < 0x20 || b == 0x7f; }

size_t LongestRun(const std::string& s, char c) {
  size_t best = 0, run = 0;
  for (char x : s) {
    run = x == c ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

}  // namespace

std::string MdCode(const std::string& s, bool in_table) {
  std::string body;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (IsControl(b)) {
      body += Hex(b);
    } else if (in_table && c == '|') {
      body += "\\|";
    } else {
      body += c;
    }
  }
  const std::string fence(LongestRun(body, '`') + 1, '`');
  // A space on both sides when the content starts or ends with a backtick (CommonMark strips
  // one space on each side).
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  if (body.empty()) return "` `";
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string MdText(const std::string& s) {
  std::string out;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    out += IsControl(b) ? Hex(b) : std::string(1, c);
  }
  return out;
}

std::string MdFence(const std::string& info, const std::string& content) {
  std::string body;
  for (char c : content) body += c == '\0' ? std::string("\\x00") : std::string(1, c);
  if (!body.empty() && body.back() != '\n') body += '\n';
  const std::string fence(std::max<size_t>(3, LongestRun(body, '`') + 1), '`');
  return fence + info + "\n" + body + fence + "\n";
}

std::string ShellWord(const std::string& s) {
  if (s.empty()) return "''";
  bool plain = true, control = false;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (IsControl(b)) control = true;
    if (!(std::isalnum(b) || std::string("/._-+=:,").find(c) != std::string::npos)) plain = false;
  }
  if (plain) return s;
  if (control) {
    std::string q = "$'";
    for (char c : s) {
      const auto b = static_cast<unsigned char>(c);
      if (IsControl(b)) {
        q += Hex(b);
      } else if (c == '\'' || c == '\\') {
        q += '\\';
        q += c;
      } else {
        q += c;
      }
    }
    return q + "'";
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace fusefuzz
