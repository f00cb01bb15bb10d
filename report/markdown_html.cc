#include "report/markdown_html.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "report/campaign_summary.h"

namespace fusefuzz {
namespace {

std::string Esc(const std::string& s) { return XmlEscape(s); }

size_t RunAt(const std::string& s, size_t i, char c) {
  size_t n = 0;
  while (i + n < s.size() && s[i + n] == c) ++n;
  return n;
}

// Inline markup of one line: `code` spans (closed by a run of as many backticks; CommonMark
// strips one space each side when both are there), **bold**, and `\|` in table cells.
std::string Inline(const std::string& s, bool in_table) {
  std::string out, text;
  bool bold = false;
  auto flush = [&] {
    out += Esc(text);
    text.clear();
  };
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '`') {
      const size_t n = RunAt(s, i, '`');
      const size_t close = s.find(std::string(n, '`'), i + n);
      if (close != std::string::npos && RunAt(s, close, '`') == n) {
        std::string code = s.substr(i + n, close - i - n);
        if (code.size() >= 2 && code.front() == ' ' && code.back() == ' ') {
          code = code.substr(1, code.size() - 2);
        }
        if (in_table) {
          for (size_t p; (p = code.find("\\|")) != std::string::npos;) code.erase(p, 1);
        }
        flush();
        out += "<code>" + Esc(code) + "</code>";
        i = close + n;
        continue;
      }
      text += std::string(n, '`');
      i += n;
      continue;
    }
    if (s.compare(i, 2, "**") == 0) {
      flush();
      out += bold ? "</b>" : "<b>";
      bold = !bold;
      i += 2;
      continue;
    }
    if (in_table && s.compare(i, 2, "\\|") == 0) {
      text += '|';
      i += 2;
      continue;
    }
    text += s[i++];
  }
  flush();
  if (bold) out += "</b>";
  return out;
}

// The cells of a table row "| a | b `x\|y` |": split at '|' outside code spans and escapes.
std::vector<std::string> Cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string cur;
  size_t i = row.find('|') + 1;
  size_t end = row.rfind('|');
  while (i < end) {
    if (row[i] == '`') {
      const size_t n = RunAt(row, i, '`');
      const size_t close = row.find(std::string(n, '`'), i + n);
      if (close != std::string::npos && close < end) {
        cur += row.substr(i, close + n - i);
        i = close + n;
        continue;
      }
      cur += row.substr(i, n);
      i += n;
      continue;
    }
    if (row[i] == '\\' && i + 1 < end && row[i + 1] == '|') {
      cur += "\\|";
      i += 2;
      continue;
    }
    if (row[i] == '|') {
      cells.push_back(cur);
      cur.clear();
      ++i;
      continue;
    }
    cur += row[i++];
  }
  cells.push_back(cur);
  for (std::string& c : cells) {
    const size_t a = c.find_first_not_of(' ');
    c = a == std::string::npos ? "" : c.substr(a, c.find_last_not_of(' ') - a + 1);
  }
  return cells;
}

bool IsTableRow(const std::string& l) { return l.size() >= 2 && l[0] == '|'; }

bool IsSeparatorRow(const std::string& l) {
  return IsTableRow(l) && l.find_first_not_of("|-: ") == std::string::npos;
}

}  // namespace

std::string MarkdownToHtml(const std::string& md, int heading_shift) {
  std::vector<std::string> lines;
  std::istringstream in(md);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::ostringstream h;
  std::string para;
  int list_depth = 0;  // open <ul> levels
  auto close_para = [&] {
    if (!para.empty()) h << "<p>" << Inline(para, false) << "</p>\n";
    para.clear();
  };
  auto close_lists = [&](int depth) {
    for (; list_depth > depth; --list_depth) h << "</li></ul>\n";
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const size_t fence = RunAt(l, 0, '`');
    if (fence >= 3) {  // a fenced block, closed by a run at least as long
      close_para();
      close_lists(0);
      h << "<pre>";
      for (++i; i < lines.size(); ++i) {
        const std::string& c = lines[i];
        if (RunAt(c, 0, '`') >= fence && c.find_first_not_of('`') == std::string::npos) break;
        h << Esc(c) << "\n";
      }
      h << "</pre>\n";
      continue;
    }
    if (l.find_first_not_of(' ') == std::string::npos) {
      close_para();
      close_lists(0);
      continue;
    }
    const size_t hashes = RunAt(l, 0, '#');
    if (hashes >= 1 && hashes <= 6 && l.size() > hashes && l[hashes] == ' ') {
      close_para();
      close_lists(0);
      const int level = std::min(6, static_cast<int>(hashes) + heading_shift);
      h << "<h" << level << ">" << Inline(l.substr(hashes + 1), false) << "</h" << level << ">\n";
      continue;
    }
    if (IsTableRow(l) && i + 1 < lines.size() && IsSeparatorRow(lines[i + 1])) {
      close_para();
      close_lists(0);
      std::vector<bool> right;
      for (const std::string& c : Cells(lines[i + 1])) right.push_back(c.ends_with(':'));
      h << "<table>\n<tr>";
      for (const std::string& c : Cells(l)) h << "<th>" << Inline(c, true) << "</th>";
      h << "</tr>\n";
      for (i += 2; i < lines.size() && IsTableRow(lines[i]); ++i) {
        h << "<tr>";
        const std::vector<std::string> cells = Cells(lines[i]);
        for (size_t k = 0; k < cells.size(); ++k) {
          h << (k < right.size() && right[k] ? "<td class=\"num\">" : "<td>")
            << Inline(cells[k], true) << "</td>";
        }
        h << "</tr>\n";
      }
      --i;
      h << "</table>\n";
      continue;
    }
    const size_t indent = l.find_first_not_of(' ');
    if (l.compare(indent, 2, "- ") == 0) {
      close_para();
      const int depth = static_cast<int>(indent / 2) + 1;
      if (depth > list_depth) {
        for (; list_depth < depth; ++list_depth) h << "\n<ul><li>";
      } else {
        close_lists(depth);
        h << "</li><li>";
      }
      h << Inline(l.substr(indent + 2), false);
      continue;
    }
    if (list_depth > 0) {  // a continuation line of a list item
      h << " " << Inline(l.substr(indent), false);
      continue;
    }
    para += (para.empty() ? "" : " ") + l;
  }
  close_para();
  close_lists(0);
  return h.str();
}

}  // namespace fusefuzz
