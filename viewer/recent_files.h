// viewer/recent_files.h — the File → Open Recent list, one absolute path per line in
// $XDG_CONFIG_HOME/glassbox/recent (else ~/.config/glassbox/recent), most recent first, at most kMaxRecent.
//
// load() of a missing or unreadable file gives an empty list; push() moves a path to the front (no duplicates)
// and saves; a failure to save is reported by the return value, never thrown: a viewer without a writable home
// still works.
#pragma once

#include <string>
#include <vector>

namespace gb::viewer {

constexpr std::size_t kMaxRecent = 10;

std::string recent_files_path();  // "" when neither XDG_CONFIG_HOME nor HOME is set

class RecentFiles {
 public:
  explicit RecentFiles(std::string file = recent_files_path()) : file_(std::move(file)) { load(); }
  void load();
  bool push(const std::string& path);  // false when the list could not be saved
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::string file_;
  std::vector<std::string> paths_;
};

}  // namespace gb::viewer
