// viewer/app.cpp — menu, tabs, the open dialog and the error state (contract in app.h).
#include "viewer/app.h"

#include <imgui.h>

#include <algorithm>
#include <filesystem>

#include "traces/error.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer {

App::App(bool remember_recent)
    : recent_(remember_recent ? recent_files_path() : ""),
      panel_state_(std::make_unique<panels::PanelState>()),
      remember_(remember_recent) {}
App::~App() = default;
panels::RunState& App::run_state() { return panel_state_->run; }

void App::resolve_jump() {  // ViewState::jump: focus the span once its row is read (off the frame)
  if (!view_.jump) return;
  const ViewState::Jump j = *view_.jump;
  if (const auto s = model_->timeline().span(j.span)) {
    view_.focus(s->start_ns, s->end_ns, j.pad);
    view_.jump.reset();
  } else if (!model_->timeline().span_pending(j.span)) {
    view_.jump.reset();  // no such span
  }
}

void App::open(const std::string& path) {
  const bool same = path == path_ && model_;
  model_.reset();
  path_ = path;
  error_.clear();
  view_.jump.reset();  // a span id of the previous trace
  try {
    model_ = std::make_unique<TraceModel>(path);
  } catch (const std::exception& e) {
    error_ = e.what();
    return;
  }
  if (same && !compare_path_.empty()) model_->compare().start(compare_path_);
  if (!same) {
    compare_path_.clear();
    view_ = ViewState{};
    panel_state_->run = panels::RunState{};  // another trace: the Run panel fits it
    panel_state_->anomalies = panels::AnomaliesState{};  // its ids name other anomalies
    view_.focus(model_->begin_ns(), model_->end_ns(), 0.01);
  }
  if (remember_) recent_.push(path);
}

void App::refresh() {
  if (!path_.empty()) open(path_);
}

std::string App::title() const {
  if (path_.empty()) return "glassbox viewer";
  return "glassbox — " + path_ + (error_.empty() ? "" : " (cannot open)");
}

void App::menu() {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O")) open_dialog_ = true;
    if (ImGui::BeginMenu("Open Recent", !recent_.paths().empty())) {
      for (const std::string& p : recent_.paths())
        if (ImGui::MenuItem(p.c_str())) open(p);
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Compare with...", nullptr, false, model_ != nullptr)) open_dialog_ = compare_dialog_ = true;
    if (ImGui::MenuItem("Refresh", "F5", false, !path_.empty())) refresh();
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) quit_ = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (int i = 0; i < static_cast<int>(Panel::count); ++i)
      if (ImGui::MenuItem(kPanelTitles[i], nullptr, current_ == static_cast<Panel>(i))) view_.show = static_cast<Panel>(i);
    ImGui::EndMenu();
  }
  if (model_) {
    const std::string info = model_->meta("command").value_or("") + "   " + std::to_string(model_->span_count()) + " spans";
    // A trace being written: "live: N steps, last new step X s ago", then how it ended.
    const std::string live = model_->live().text();
    const float live_w = live.empty() ? 0 : ImGui::CalcTextSize(live.c_str()).x + 24;
    ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(info.c_str()).x - live_w - 16);
    if (panels::live_indicator(*model_)) ImGui::SameLine(0, 24);
    ImGui::TextDisabled("%s", info.c_str());
  }
  ImGui::EndMenuBar();
}

void App::compare_with(const std::string& path) {
  if (!model_) return;
  compare_path_ = path;
  model_->compare().start(path);
}

void App::pick(const std::string& path) {
  if (compare_dialog_) {
    compare_with(path);
    view_.show = Panel::compare;
  } else {
    open(path);
  }
  compare_dialog_ = false;
}

void App::open_dialog() {
  if (open_dialog_) {
    ImGui::OpenPopup("Open trace");
    open_dialog_ = false;
    if (!open_buf_[0]) {
      std::string cwd = std::filesystem::current_path().string() + "/";
      std::snprintf(open_buf_, sizeof open_buf_, "%s", cwd.c_str());
    }
  }
  ImGui::SetNextWindowSize(ImVec2(640, 420), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal("Open trace", nullptr)) return;
  ImGui::TextUnformatted(compare_dialog_ ? "Path of the trace to compare this one with (.db):" : "Path of a glassbox trace (.db):");
  ImGui::SetNextItemWidth(-1);
  const bool enter = ImGui::InputText("##path", open_buf_, sizeof open_buf_, ImGuiInputTextFlags_EnterReturnsTrue);
  // The folder of the typed path: its sub-folders and .db files.
  namespace fs = std::filesystem;
  fs::path dir = fs::path(open_buf_);
  if (!fs::is_directory(dir)) dir = dir.parent_path();
  ImGui::BeginChild("##files", ImVec2(0, -36), true);
  std::error_code ec;
  std::vector<fs::directory_entry> entries;
  for (const auto& e : fs::directory_iterator(dir.empty() ? "." : dir, fs::directory_options::skip_permission_denied, ec))
    if (e.is_directory(ec) || e.path().extension() == ".db") entries.push_back(e);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });
  if (ImGui::Selectable("../")) std::snprintf(open_buf_, sizeof open_buf_, "%s/", dir.parent_path().c_str());
  for (const auto& e : entries) {
    const std::string name = e.path().filename().string() + (e.is_directory(ec) ? "/" : "");
    if (ImGui::Selectable(name.c_str(), false, ImGuiSelectableFlags_AllowDoubleClick)) {
      std::snprintf(open_buf_, sizeof open_buf_, "%s%s", e.path().c_str(), e.is_directory(ec) ? "/" : "");
      if (!e.is_directory(ec) && ImGui::IsMouseDoubleClicked(0)) {
        pick(e.path().string());
        ImGui::CloseCurrentPopup();
      }
    }
  }
  ImGui::EndChild();
  if (ImGui::Button("Open") || enter) {
    pick(open_buf_);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup(), compare_dialog_ = false;
  ImGui::EndPopup();
}

void App::error_state() {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float w = std::min(avail.x - 40, 760.0f);
  ImGui::SetCursorPos(ImVec2(ImGui::GetCursorPosX() + (avail.x - w) / 2, ImGui::GetCursorPosY() + avail.y * 0.25f));
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->ChannelsSplit(2);
  dl->ChannelsSetCurrent(1);
  ImGui::BeginGroup();
  ImGui::Dummy(ImVec2(w, 8));
  ImGui::Indent(16);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + w - 32);
  ImGui::TextColored(ImVec4(1, 1, 1, 1), "Cannot open this trace");
  ImGui::Spacing();
  ImGui::TextColored(ImVec4(1, 0.9f, 0.9f, 1), "%s", error_.c_str());
  ImGui::Spacing();
  ImGui::TextColored(ImVec4(1, 0.8f, 0.8f, 1),
                     "Choose another file with File > Open, or press F5 to try again (a trace still being written "
                     "becomes readable after its first commit, within ~100 ms).");
  ImGui::PopTextWrapPos();
  ImGui::Unindent(16);
  ImGui::Dummy(ImVec2(w, 8));
  ImGui::EndGroup();
  dl->ChannelsSetCurrent(0);
  const ImVec2 q = ImGui::GetItemRectMax();
  dl->AddRectFilled(p, ImVec2(p.x + w, q.y), plot::to_imgui(color::kErrorBanner), 6);
  dl->ChannelsMerge();
}

void App::frame() {
  if (view_.reload) view_.reload = false, refresh();  // a panel asked (a window written after the open)
  if (model_) model_->poll();                         // a trace being written: what the follower read (no SQL)
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed('O')) open_dialog_ = true;
  if (io.KeyCtrl && ImGui::IsKeyPressed('Q')) quit_ = true;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(io.DisplaySize);
  ImGui::Begin("glassbox", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings);
  menu();
  if (!error_.empty()) {
    error_state();
  } else if (!model_) {
    plot::empty_state("No trace open.", "File > Open (Ctrl+O) a glassbox trace (.db), or start the viewer with "
                                        "`glassbox view run.db`. Make one with GLASSBOX_TRACE=run.db ./train_mlp, or "
                                        "`glassbox synth run.db`.");
  } else if (ImGui::BeginTabBar("##panels")) {
    resolve_jump();
    using Draw = void (*)(TraceModel&, ViewState&, panels::PanelState&);
    static constexpr Draw kDraw[] = {panels::run,        panels::timeline,  panels::memory,
                                     panels::ops,        panels::anomalies, panels::gradients,
                                     panels::dataloader, panels::graph,     panels::compare};
    const std::optional<Panel> show = view_.show;
    view_.show.reset();
    for (int i = 0; i < static_cast<int>(Panel::count); ++i) {
      const auto p = static_cast<Panel>(i);
      std::string label = kPanelTitles[i];
      if (p == Panel::anomalies && !model_->anomalies().empty())
        label += " (" + std::to_string(model_->anomalies().size()) + ")";
      label += "###" + std::string(kPanelNames[i]);
      if (ImGui::BeginTabItem(label.c_str(), nullptr, show == p ? ImGuiTabItemFlags_SetSelected : 0)) {
        current_ = p;
        ImGui::BeginChild("##panel", ImVec2(0, 0), false);
        kDraw[i](*model_, view_, *panel_state_);
        ImGui::EndChild();
        ImGui::EndTabItem();
      }
    }
    ImGui::EndTabBar();
  }
  open_dialog();
  ImGui::End();
}

}  // namespace gb::viewer
