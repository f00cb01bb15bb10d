// Strings from files and targets (node, value and rule names, a target's messages) in Markdown:
// escaped so that they can neither break a table, nor close a code block, nor start a line.
#pragma once

#include <string>

namespace fusefuzz {

// `s` as an inline code span: control characters (newline included) as \xNN, delimited by more
// backticks than the longest run inside; `in_table`: '|' as \| (GitHub tables split cells on it
// even inside code).
std::string MdCode(const std::string& s, bool in_table = false);

// `s` in running text (a list item, a sentence): control characters as \xNN, so that it stays
// on its line.
std::string MdText(const std::string& s);

// A fenced code block of `content` (which may hold any bytes but NUL is shown as \x00): the
// fence is longer than any backtick run of the content, so no line of it can close the block.
std::string MdFence(const std::string& info, const std::string& content);

// `s` as one word for a POSIX shell (bash, as the commands in report.md are shown): as is when
// it is plain, else single-quoted, and $'...' with \xNN when it holds control characters
// (a newline would end the command and forge a line).
std::string ShellWord(const std::string& s);

}  // namespace fusefuzz
