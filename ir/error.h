// The one error type for bad input anywhere (files, graphs, options). The CLI turns it into a
// message on stderr and exit status 2. `where` is a location such as a file name plus a JSON
// pointer ("graph.json: /nodes/3/attrs/group") or a node ("node 'conv1' input 0").
#pragma once

#include <stdexcept>
#include <string>

namespace fusefuzz {

class InputError : public std::runtime_error {
 public:
  InputError(std::string where, std::string what)
      : std::runtime_error(where.empty() ? what : where + ": " + what),
        where_(std::move(where)),
        what_(std::move(what)) {}
  const std::string& where() const { return where_; }
  const std::string& problem() const { return what_; }

 private:
  std::string where_;
  std::string what_;
};

// fusefuzz could not write its own output (disk full, permissions, a file that is not a regular
// file): exit status 2 like bad input, and never a finding of the target under test.
class OutputError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace fusefuzz
