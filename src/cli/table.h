// A plain-text table for terminal listings: columns padded to their widest cell, counted in
// display characters (UTF-8 code points, emoji as two columns).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace talaria::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print(std::FILE* out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace talaria::cli
