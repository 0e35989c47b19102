// tools/export_chrome.cpp — streams every table the timeline needs into Chrome Trace Event JSON.
#include "tools/export_chrome.h"

#include "tools/json_text.h"
#include "tools/output_file.h"
#include "traces/schema.h"

namespace gb::tools {

using namespace gb::query;

namespace {

using gb::trace::SpanKind;

// Appends events to a chunk that goes to the file whenever it grows past a few KiB; a comma before all but the first.
class EventWriter {
 public:
  explicit EventWriter(OutputFile& f) : f_(f) {}
  std::string& begin() {
    if (!first_) s_ += ",\n";
    first_ = false;
    return s_;
  }
  void end() {
    if (s_.size() > 1 << 16) flush();
  }
  void flush() {
    f_.write(s_);
    s_.clear();
  }

 private:
  OutputFile& f_;
  std::string s_;
  bool first_ = true;
};

// ,"key":<int> when the column is not NULL
void opt_int_arg(std::string& s, const char* key, const Row& r, int col) {
  if (r.is_null(col)) return;
  s += ",\"";
  s += key;
  s += "\":";
  append_int(s, r.i64(col));
}

void write_threads(const TraceDb& db, EventWriter& w, ExportCounts& n) {
  const std::string command = db.reader().meta("command").value_or(db.path());
  if (db.scalar("SELECT count(*) FROM ranks") == 0) {
    std::string& s = w.begin();
    s += R"({"ph":"M","name":"process_name","pid":1,"args":{"name":)";
    append_json_string(s, "glassbox: " + command);
    s += "}}";
    w.end();
  }
  // A merged trace: one process per rank (pid rank + 1), named by rank and host.
  db.each("SELECT rank, host FROM ranks ORDER BY rank", [&](const Row& r) {
    std::string& e = w.begin();
    e += R"({"ph":"M","name":"process_name","pid":)";
    append_int(e, r.i64(0) + 1);
    e += R"(,"args":{"name":)";
    append_json_string(e,
                       "glassbox rank " + std::to_string(r.i64(0)) + " (" + std::string(r.text(1)) + "): " + command);
    e += "}}";
    w.end();
  });
  db.each("SELECT id, name, role, coalesce(rank, 0) + 1 FROM threads ORDER BY id", [&](const Row& r) {
    std::string& e = w.begin();
    e += R"({"ph":"M","name":"thread_name","pid":)";
    append_int(e, r.i64(3));
    e += R"(,"tid":)";
    append_int(e, r.i64(0));
    e += R"(,"args":{"name":)";
    append_json_string(e, r.text(1));
    e += R"(}},)";
    e += "\n";
    e += R"({"ph":"M","name":"thread_sort_index","pid":)";
    append_int(e, r.i64(3));
    e += R"(,"tid":)";
    append_int(e, r.i64(0));
    e += R"(,"args":{"sort_index":)";
    append_int(e, r.i64(0));
    e += "}}";
    w.end();
    ++n.threads;
  });
}

void write_spans(const TraceDb& db, EventWriter& w, ExportCounts& n) {
  db.each(
      "SELECT s.id, s.kind, s.start_ns, s.dur_ns, s.thread_id, s.parent_id, s.step, s.seq, t.text, m.path, "
      "coalesce(th.rank, 0) + 1 FROM spans s LEFT JOIN strings t ON t.id = s.name_id "
      "LEFT JOIN modules m ON m.id = s.module_id LEFT JOIN threads th ON th.id = s.thread_id",
      [&](const Row& r) {
        std::string& e = w.begin();
        e += R"({"ph":"X","name":)";
        append_json_string(e, r.text(8));
        e += R"(,"cat":)";
        append_json_string(e, gb::trace::name(static_cast<SpanKind>(r.i64(1))));
        e += R"(,"ts":)";
        append_micros(e, r.i64(2));
        e += R"(,"dur":)";
        append_micros(e, r.i64(3));
        e += R"(,"pid":)";
        append_int(e, r.i64(10));
        e += R"(,"tid":)";
        append_int(e, r.i64(4));
        e += R"(,"args":{"id":)";
        append_int(e, r.i64(0));
        opt_int_arg(e, "parent", r, 5);
        opt_int_arg(e, "step", r, 6);
        opt_int_arg(e, "seq", r, 7);
        if (!r.is_null(9)) {
          e += R"(,"module":)";
          append_json_string(e, r.text(9));
        }
        e += "}}";
        w.end();
        ++n.spans;
      });
}

void write_counters(const TraceDb& db, EventWriter& w, ExportCounts& n) {
  db.each("SELECT c.t_ns, t.text, c.value FROM counters c LEFT JOIN strings t ON t.id = c.name_id ORDER BY c.rowid",
          [&](const Row& r) {
            std::string& e = w.begin();
            e += R"({"ph":"C","name":)";
            append_json_string(e, r.text(1));
            e += R"(,"ts":)";
            append_micros(e, r.i64(0));
            e += R"(,"pid":1,"args":{"value":)";
            append_number(e, r.f64(2));
            e += "}}";
            w.end();
            ++n.counters;
          });
}

void write_instants(const TraceDb& db, EventWriter& w, ExportCounts& n) {
  db.each(
      "SELECT i.t_ns, t.text, i.thread_id, i.span_id, i.step, coalesce(th.rank, 0) + 1 FROM instants i "
      "LEFT JOIN strings t ON t.id = i.name_id LEFT JOIN threads th ON th.id = i.thread_id ORDER BY i.id",
      [&](const Row& r) {
        std::string& e = w.begin();
        e += R"({"ph":"i","s":"t","name":)";
        append_json_string(e, r.text(1));
        e += R"(,"ts":)";
        append_micros(e, r.i64(0));
        e += R"(,"pid":)";
        append_int(e, r.i64(5));
        e += R"(,"tid":)";
        append_int(e, r.i64(2));
        e += R"(,"args":{)";
        std::size_t mark = e.size();
        opt_int_arg(e, "span", r, 3);
        opt_int_arg(e, "step", r, 4);
        if (e.size() > mark) e.erase(mark, 1);  // the leading comma of the first arg
        e += "}}";
        w.end();
        ++n.instants;
      });
}

void write_anomalies(const TraceDb& db, EventWriter& w, ExportCounts& n) {
  db.each("SELECT t_ns, kind, severity, message, step, value, coalesce(rank, 0) + 1 FROM anomalies ORDER BY t_ns, id",
          [&](const Row& r) {
            std::string& e = w.begin();
            e += R"({"ph":"i","s":"g","name":)";
            append_json_string(e, gb::trace::name(static_cast<gb::trace::AnomalyKind>(r.i64(1))));
            e += R"(,"cat":"anomaly","ts":)";
            append_micros(e, r.i64(0));
            e += R"(,"pid":)";
            append_int(e, r.i64(6));
            e += R"(,"args":{"message":)";
            append_json_string(e, r.text(3));
            e += R"(,"severity":)";
            append_json_string(e, gb::trace::name(static_cast<gb::trace::Severity>(r.i64(2))));
            opt_int_arg(e, "step", r, 4);
            if (!r.is_null(5)) {
              e += R"(,"value":)";
              append_number(e, r.f64(5));
            }
            e += "}}";
            w.end();
            ++n.anomalies;
          });
}

void write_metadata(const TraceDb& db, std::string& s) {
  s += R"("metadata":{)";
  bool first = true;
  db.each("SELECT key, value FROM meta ORDER BY key", [&](const Row& r) {
    if (!first) s += ',';
    first = false;
    append_json_string(s, r.text(0));
    s += ':';
    append_json_string(s, r.text(1));
  });
  s += "}";
}

}  // namespace

ExportCounts export_chrome(const TraceDb& db, const std::string& out_path) {
  return export_chrome(db, out_path, ends_with_gz(out_path));
}

ExportCounts export_chrome(const TraceDb& db, const std::string& out_path, bool gzip) {
  ExportCounts n;
  OutputFile f(out_path, gzip);
  f.write("{\"traceEvents\":[\n");
  EventWriter w(f);
  write_threads(db, w, n);
  write_spans(db, w, n);
  write_counters(db, w, n);
  write_instants(db, w, n);
  write_anomalies(db, w, n);
  w.flush();
  std::string tail = "\n],\"displayTimeUnit\":\"ns\",";
  write_metadata(db, tail);
  tail += "}\n";
  f.write(tail);
  n.bytes = f.bytes_in();
  f.commit();
  return n;
}

}  // namespace gb::tools
