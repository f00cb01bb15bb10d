// report.md as HTML, for summary.html: the subset of markdown fusefuzz writes (report/
// markdown.h): headings, paragraphs, bullet lists (nested by two spaces), fenced code blocks,
// pipe tables, inline `code` (any number of backticks) and **bold**. Every character of the
// text is escaped: nothing in a report (names a target chose, its messages) becomes markup.
// Anything else is shown as text, never interpreted.
#pragma once

#include <string>

namespace fusefuzz {

// `heading_shift`: added to every heading level (a report's "# Finding" under a page's h2).
std::string MarkdownToHtml(const std::string& md, int heading_shift = 0);

}  // namespace fusefuzz
