// tests/viewer/screenshot.h — runs the built glassbox-viewer headless under xvfb-run, decodes its PNG with
// stb_image, and counts pixels of a colour: what the screenshot tests of each panel check.
#pragma once

#define STB_IMAGE_IMPLEMENTATION
#include <doctest/doctest.h>
#include <stb_image.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tools/synth.h"
#include "traces/temp_dir.h"
#include "traces/writer.h"

namespace shot {

struct Png {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
  std::uint32_t at(int x, int y) const {
    const std::size_t i = (static_cast<std::size_t>(y) * width + x) * 3;
    return (std::uint32_t{rgb[i]} << 16) | (std::uint32_t{rgb[i + 1]} << 8) | rgb[i + 2];
  }
  // Pixels within `tol` per channel of colour c (0xRRGGBB), inside rows [y0, y1).
  std::int64_t count(std::uint32_t c, int tol = 0, int y0 = 0, int y1 = -1) const {
    std::int64_t n = 0;
    for (int y = y0; y < (y1 < 0 ? height : y1); ++y)
      for (int x = 0; x < width; ++x) {
        const std::uint32_t p = at(x, y);
        bool ok = true;
        for (int s : {16, 8, 0}) ok = ok && std::abs(int((p >> s) & 0xff) - int((c >> s) & 0xff)) <= tol;
        n += ok;
      }
    return n;
  }
  // The bounding box {x0, y0, x1, y1} of pixels of colour c in rows [y0, height); all -1 when none.
  std::vector<int> bbox(std::uint32_t c, int from_y = 0) const {
    std::vector<int> b{-1, -1, -1, -1};
    for (int y = from_y; y < height; ++y)
      for (int x = 0; x < width; ++x)
        if (at(x, y) == c) {
          if (b[0] < 0 || x < b[0]) b[0] = x;
          if (b[1] < 0) b[1] = y;
          b[2] = std::max(b[2], x), b[3] = y;
        }
    return b;
  }
};

inline bool have_xvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

// glassbox-viewer TRACE --screenshot OUT --panel PANEL --size SIZE EXTRA under xvfb-run; nullopt (and a failed
// CHECK) when it exits non-zero or writes no readable PNG.
inline std::optional<Png> take(const std::string& trace, const std::string& panel, const std::string& out,
                               const std::string& size = "1280x800", const std::string& extra = "") {
  const std::string cmd = "xvfb-run -a -s '-screen 0 1600x1000x24' " + std::string(GLASSBOX_VIEWER_BIN) + " '" + trace +
                          "' --screenshot '" + out + "' --panel " + panel + " --size " + size + " " + extra;
  const int rc = std::system(cmd.c_str());
  CHECK_MESSAGE(rc == 0, cmd);
  if (rc != 0) return std::nullopt;
  Png p;
  int n = 0;
  unsigned char* data = stbi_load(out.c_str(), &p.width, &p.height, &n, 3);
  CHECK_MESSAGE(data != nullptr, "cannot decode " << out);
  if (!data) return std::nullopt;
  p.rgb.assign(data, data + static_cast<std::size_t>(p.width) * p.height * 3);
  stbi_image_free(data);
  return p;
}

#ifdef GLASSBOX_FAULTS
// A real traced run: the training program `scenario` of tests/engine/monitor/faults.cpp (a user's loop with one
// planted fault, or a healthy one), run with only GLASSBOX_TRACE set (and `env`, e.g. "GLASSBOX_ALLOC_CONF=..."
// for the scenarios that run out of memory). Returns its trace, "" when it failed.
inline std::string engine_run(const TempDir& tmp, const std::string& scenario, const std::string& env = "") {
  const std::string db = tmp.file(scenario + ".db");
  const std::string cmd = "GLASSBOX_TRACE='" + db + "' " + env + " " + std::string(GLASSBOX_FAULTS) + " " + scenario +
                          " > /dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  CHECK_MESSAGE(rc == 0, cmd);
  return rc == 0 ? db : "";
}
#endif

}  // namespace shot

// Skips the test case with a message when xvfb-run is not installed (tools/install-deps.sh installs it).
#define SKIP_WITHOUT_XVFB()                                                               \
  if (!shot::have_xvfb()) {                                                               \
    MESSAGE("skipped: xvfb-run is missing (apt-get install xvfb xauth libgl1-mesa-dri)"); \
    return;                                                                               \
  }
