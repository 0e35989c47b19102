// tests/viewer/imgui_headless.h — Dear ImGui without a window or a renderer, for the tests that drive the App frame
// by frame (ui_thread_test.cpp, panels/anomalies_test.cpp): a context with a display size and a built font atlas.
#pragma once

#include <imgui.h>

struct ImGuiHeadless {
  ImGuiHeadless() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1400, 900);
    io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;  // as the viewer's OpenGL3 renderer: large draw lists
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);  // builds the atlas (no renderer needed)
  }
  ~ImGuiHeadless() { ImGui::DestroyContext(); }
  ImGuiHeadless(const ImGuiHeadless&) = delete;
  ImGuiHeadless& operator=(const ImGuiHeadless&) = delete;
};
