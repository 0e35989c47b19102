// viewer/recent_files.cpp — the recent-files list (contract in recent_files.h).
#include "viewer/recent_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gb::viewer {

std::string recent_files_path() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/glassbox/recent";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/glassbox/recent";
  return "";
}

void RecentFiles::load() {
  paths_.clear();
  std::ifstream in(file_);
  for (std::string line; std::getline(in, line) && paths_.size() < kMaxRecent;)
    if (!line.empty() && std::find(paths_.begin(), paths_.end(), line) == paths_.end()) paths_.push_back(line);
}

bool RecentFiles::push(const std::string& path) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) abs = path;
  paths_.erase(std::remove(paths_.begin(), paths_.end(), abs), paths_.end());
  paths_.insert(paths_.begin(), abs);
  if (paths_.size() > kMaxRecent) paths_.resize(kMaxRecent);
  if (file_.empty()) return false;
  std::filesystem::create_directories(std::filesystem::path(file_).parent_path(), ec);
  std::ofstream out(file_, std::ios::trunc);
  for (const std::string& p : paths_) out << p << "\n";
  return static_cast<bool>(out.flush());
}

}  // namespace gb::viewer
