// viewer/window.cpp — the GLFW window, the ImGui backends, and the offscreen screenshot (contract in window.h).
#define GL_GLEXT_PROTOTYPES
#include "viewer/window.h"

#include <GLFW/glfw3.h>
#include <GL/gl.h>
#include <GL/glext.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace gb::viewer {

namespace {

void on_glfw_error(int code, const char* what) { std::fprintf(stderr, "glassbox-viewer: GLFW error %d: %s\n", code, what); }

void style() {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0;
  s.FrameRounding = 3;
  s.TabRounding = 3;
  s.ScrollbarRounding = 3;
  s.ItemSpacing = ImVec2(8, 5);
  s.Colors[ImGuiCol_WindowBg] = ImVec4(0.11f, 0.12f, 0.14f, 1);
  s.Colors[ImGuiCol_ChildBg] = ImVec4(0.13f, 0.14f, 0.16f, 1);
  s.Colors[ImGuiCol_TableRowBgAlt] = ImVec4(1, 1, 1, 0.03f);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // no imgui.ini beside the user's files
  for (const char* f : {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                        "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf"})
    if (std::filesystem::exists(f)) {
      io.Fonts->AddFontFromFileTTF(f, 15.0f);
      return;
    }
  io.Fonts->AddFontDefault();
}

GLFWwindow* create(int width, int height, bool visible) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr, "glassbox-viewer: cannot open a window (no display?). Set DISPLAY, or run headless under "
                         "Xvfb: xvfb-run -a glassbox-viewer FILE --screenshot out.png\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  GLFWwindow* w = glfwCreateWindow(width, height, "glassbox viewer", nullptr, nullptr);
  if (!w) {
    std::fprintf(stderr, "glassbox-viewer: cannot create an OpenGL 3.0 window; check the GL driver (glxinfo | grep "
                         "'OpenGL version'), or use Mesa: apt-get install libgl1-mesa-dri\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(w);
  glfwSwapInterval(1);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  style();
  ImGui_ImplGlfw_InitForOpenGL(w, true);
  ImGui_ImplOpenGL3_Init("#version 130");
  return w;
}

void destroy(GLFWwindow* w) {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(w);
  glfwTerminate();
}

void build_frame(App& app, int width, int height) {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGuiIO& io = ImGui::GetIO();
  if (width > 0) {  // headless: the offscreen size, whatever the hidden window got
    io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
    io.DisplayFramebufferScale = ImVec2(1, 1);
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  }
  ImGui::NewFrame();
  if (ImGui::IsKeyPressed(GLFW_KEY_F5)) app.refresh();
  app.frame();
  ImGui::Render();
}

}  // namespace

int run_window(App& app, int width, int height) {
  GLFWwindow* w = create(width, height, true);
  if (!w) return 2;
  std::string title;
  while (!glfwWindowShouldClose(w) && !app.quit_requested()) {
    glfwPollEvents();
    if (app.title() != title) glfwSetWindowTitle(w, (title = app.title()).c_str());
    build_frame(app, 0, 0);
    int fw = 0, fh = 0;
    glfwGetFramebufferSize(w, &fw, &fh);
    glViewport(0, 0, fw, fh);
    glClearColor(0.11f, 0.12f, 0.14f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glfwSwapBuffers(w);
  }
  destroy(w);
  return 0;
}

int screenshot(App& app, const std::string& png, int width, int height, int frames) {
  GLFWwindow* w = create(width, height, false);
  if (!w) return 2;
  GLuint fbo = 0, color = 0;
  glGenFramebuffers(1, &fbo);
  glGenRenderbuffers(1, &color);
  glBindRenderbuffer(GL_RENDERBUFFER, color);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
    std::fprintf(stderr, "glassbox-viewer: cannot make a %dx%d offscreen framebuffer\n", width, height);
    destroy(w);
    return 2;
  }
  const bool timing = std::getenv("GLASSBOX_VIEWER_TIMING") != nullptr;
  for (int i = 0; i < frames; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    build_frame(app, width, height);
    if (timing)
      std::fprintf(stderr, "glassbox-viewer: frame %d built in %.2f ms (CPU, draw lists)\n", i,
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glViewport(0, 0, width, height);
    glClearColor(0.11f, 0.12f, 0.14f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (app.model()) app.model()->wait_queries();  // the next frame swaps in the exact timeline windows
  }
  std::vector<unsigned char> pixels(static_cast<std::size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  glDeleteRenderbuffers(1, &color);
  glDeleteFramebuffers(1, &fbo);
  destroy(w);
  for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // opaque
  stbi_flip_vertically_on_write(1);  // GL's rows go bottom-up
  if (!stbi_write_png(png.c_str(), width, height, 4, pixels.data(), width * 4)) {
    std::fprintf(stderr, "glassbox-viewer: cannot write %s (is its folder writable?)\n", png.c_str());
    return 2;
  }
  return 0;
}

}  // namespace gb::viewer
