// samples/lessons/item_twice.cpp — does loss.item() run the graph again?
//
// The claim (a wrong one that circulates in beginner material: calling loss.item() twice recomputes the graph, so
// store it in a variable): item() reads the one number already in the loss tensor's storage (PyTorch's
// _local_scalar_dense; a device sync on a GPU, which is the real reason to call it once). The forward ops ran when
// the loss was computed; nothing is recorded to run again.
//
// The lesson records a trace (argv[1], kept; by default a temporary file, removed), computes an MLP's loss inside
// a user span "forward", calls loss.item() inside spans "item 1" and "item 2", then, as a control that the count
// sees recomputation, runs the forward again inside "forward again". It reads the trace back (gb::trace::Reader)
// and prints how many op spans ran inside each span, with their names.
//
//   ./build/samples/lessons/lesson_item_twice [trace.db]
#include <glassbox/glassbox.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "lesson.h"
#include "traces/reader.h"

namespace F = gb::nn::functional;

namespace {

struct Window {
  std::string names;  // "linear x2, relu, ..." of the op spans inside
  int64_t ops = 0;
};

// The op spans inside each user span of the trace, by the user span's name.
std::map<std::string, Window> ops_inside_user_spans(const std::string& path) {
  gb::trace::Reader reader(path);
  std::vector<gb::trace::SpanRecord> spans = reader.all<gb::trace::SpanRecord>();
  std::map<std::string, Window> out;
  for (const auto& u : spans) {
    if (u.kind != gb::trace::SpanKind::user) continue;
    std::map<std::string, int> by_name;
    Window w;
    for (const auto& s : spans)
      if (s.kind == gb::trace::SpanKind::op && s.thread_id == u.thread_id && s.start_ns >= u.start_ns &&
          s.end_ns <= u.end_ns) {
        ++w.ops;
        ++by_name[reader.string(s.name_id).value_or("?")];
      }
    for (const auto& [name, n] : by_name)
      w.names += (w.names.empty() ? "" : ", ") + name + (n > 1 ? " x" + std::to_string(n) : "");
    out[reader.string(u.name_id).value_or("?")] = w;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  lesson::Lesson lesson("item_twice", "calling loss.item() twice recomputes the graph (the forward ops run again)");
  namespace fs = std::filesystem;
  const bool keep = argc > 1;
  const std::string path =
      keep ? argv[1]
           : (fs::temp_directory_path() / ("lesson_item_twice_" + std::to_string(::getpid()) + ".db")).string();

  gb::manual_seed(0);
  gb::nn::Sequential model(gb::nn::Linear(16, 32), gb::nn::ReLU(), gb::nn::Linear(32, 4));
  gb::Tensor x = gb::randn({8, 16}), y = gb::randint(0, 4, {8});
  double v1 = 0, v2 = 0;
  {
    gb::trace::Session session(path);
    if (!session.active()) {
      std::printf("measurement invalid: could not record a trace at %s\n", path.c_str());
      return 1;
    }
    gb::Tensor loss;
    {
      GB_TRACE_SCOPE("forward");
      loss = F::cross_entropy(model(x), y);
    }
    {
      GB_TRACE_SCOPE("item 1");
      v1 = loss.item<double>();
    }
    {
      GB_TRACE_SCOPE("item 2");
      v2 = loss.item<double>();
    }
    {
      GB_TRACE_SCOPE("forward again");  // the control: what recomputing the graph looks like in the count
      loss = F::cross_entropy(model(x), y);
    }
  }  // the trace is complete here

  std::map<std::string, Window> w = ops_inside_user_spans(path);
  if (!keep)
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  for (const char* name : {"forward", "item 1", "item 2", "forward again"})
    lesson.measured(std::string("op spans inside \"") + name + "\"",
                    std::to_string(w[name].ops) + (w[name].ops ? " (" + w[name].names + ")" : ""));
  lesson.measured("loss.item() 1 and 2", std::to_string(v1) + ", " + std::to_string(v2));
  if (keep) lesson.measured("trace", path);

  // The count must see the forward (and the control's rerun) for its zero inside item() to mean anything.
  if (w["forward"].ops == 0 || w["forward again"].ops != w["forward"].ops) {
    std::printf("measurement invalid: the trace did not count the forward's ops\n");
    return 1;
  }
  bool holds = w["item 2"].ops >= w["forward"].ops || w["item 1"].ops >= w["forward"].ops;
  char evidence[240];
  std::snprintf(evidence, sizeof evidence,
                "the forward ran %lld ops; the two item() calls ran %lld and %lld and returned the same %.6f%s",
                (long long)w["forward"].ops, (long long)w["item 1"].ops, (long long)w["item 2"].ops, v2,
                holds ? "" : ": item() reads the stored number, it recomputes nothing");
  return lesson.verdict(holds, evidence);
}
