// tests/engine/autograd/layering_test.cpp — core and autograd never include the monitor (docs/DESIGN.md §1, docs/design/monitor.md): they
// report through the observers of engine/core/observer.h. Reads every source and header under engine/core,
// engine/autograd and their public headers (GLASSBOX_ENGINE_DIR, tests/CMakeLists.txt) and names each include of
// monitor/ or glassbox/monitor/ it finds.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

// "path:line: text" for each #include line naming monitor/ in the files under `dir` (recursively).
std::vector<std::string> monitor_includes(const std::filesystem::path& dir, int& files) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu")) continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto hash = line.find_first_not_of(" \t");
      if (hash == std::string::npos || line[hash] != '#' || line.find("include", hash) == std::string::npos) continue;
      if (line.find("\"monitor/") != std::string::npos || line.find("<monitor/") != std::string::npos ||
          line.find("glassbox/monitor/") != std::string::npos)
        found.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  return found;
}

}  // namespace

TEST_CASE("no file of engine/core or engine/autograd includes the monitor") {
  const std::filesystem::path engine = GLASSBOX_ENGINE_DIR;
  for (const std::string sub : {"core", "autograd", "include/glassbox/core", "include/glassbox/autograd"}) {
    CAPTURE(sub);
    REQUIRE(std::filesystem::is_directory(engine / sub));
    int files = 0;
    const auto found = monitor_includes(engine / sub, files);
    CHECK(files > 4);  // the folder was read
    for (const auto& f : found)
      FAIL_CHECK(f << " — core and autograd report through engine/core/observer.h; the monitor registers an "
                      "observer (engine/monitor/observer.cpp) instead of being called");
  }
}
