// viewer/window.h — GLFW + OpenGL 3 + Dear ImGui around an App: the interactive loop, and the headless screenshot.
//
// screenshot() renders `frames` frames of the App into an offscreen framebuffer of exactly width x height (a
// hidden GLFW window provides the GL context: under Xvfb, Mesa's llvmpipe does), reads it with glReadPixels and
// writes a PNG with stb_image_write. With GLASSBOX_VIEWER_TIMING set, it prints each frame's CPU build time. Both return a process exit code and print one line on stderr on failure.
#pragma once

#include <string>

#include "viewer/app.h"

namespace gb::viewer {

int run_window(App& app, int width, int height);
int screenshot(App& app, const std::string& png, int width, int height, int frames = 4);

}  // namespace gb::viewer
