// viewer/app.h — the viewer's window contents: the menu (File → Open, Open Recent, Compare with..., Refresh F5, Quit), one tab per
// panel, the open dialog, and the error state. It owns the TraceModel and the ViewState; viewer/window.cpp runs it.
//
// Contract: open(path) never throws. A file that cannot be read (missing, empty, corrupt, newer schema: the
// Reader's gb::trace::Error) leaves the App in an error state that draws a banner with the message and what to do;
// the previous trace, if any, is closed. refresh() reopens the same file (a trace still being written shows its
// new rows) and keeps the view; a panel asks for it with ViewState::reload (done at the start of the next frame).
// frame() first takes in what the model's live follower read (TraceModel::poll(), no SQL). Interactive opens are
// remembered in the recent-files list.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "viewer/recent_files.h"
#include "viewer/trace_model.h"
#include "viewer/view_state.h"

namespace gb::viewer {

namespace panels {
struct PanelState;
struct RunState;  // what each panel remembers between frames (viewer/panels/panels.h)
}

class App {
 public:
  explicit App(bool remember_recent = true);
  ~App();

  void open(const std::string& path);
  void refresh();
  void compare_with(const std::string& path);  // the Compare panel's second trace; kept across refresh()
  void frame();  // builds one ImGui frame filling the display

  std::string title() const;  // "glassbox — run.db"
  const std::string& error() const { return error_; }
  TraceModel* model() { return model_.get(); }
  ViewState& view() { return view_; }
  void show(Panel p) { view_.show = p; }  // selected by the next frame's tab bar, drawn from the one after
  Panel current() const { return current_; }  // the panel the last frame drew
  panels::RunState& run_state();              // the Run panel's visible steps and options (benchmarks, tests)
  bool quit_requested() const { return quit_; }

 private:
  void menu();
  void open_dialog();
  void pick(const std::string& path);  // the dialog's choice: open it, or compare with it
  void error_state();
  void resolve_jump();
  std::unique_ptr<TraceModel> model_;
  std::string path_, error_;
  ViewState view_;
  RecentFiles recent_;
  std::unique_ptr<panels::PanelState> panel_state_;
  std::string compare_path_;
  bool remember_ = true, quit_ = false, open_dialog_ = false, compare_dialog_ = false;
  char open_buf_[1024] = {};
  Panel current_ = Panel::run;
};

}  // namespace gb::viewer
