// viewer/span_search.cpp — TraceModel::search (spans by name substring, and their duration histogram) and
// wait_queries().
#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "viewer/trace_model.h"

namespace gb::viewer {

int SpanSearch::bin_of(std::int64_t dur_ns) const {
  if (edges.size() < 2 || dur_ns < edges.front() || dur_ns > edges.back()) return -1;
  const auto it = std::upper_bound(edges.begin(), edges.end(), dur_ns);
  return std::min(static_cast<int>(it - edges.begin()) - 1, static_cast<int>(edges.size()) - 2);
}

void duration_histogram(SpanSearch& s, int bins) {
  s.edges.clear(), s.counts.clear(), s.longest.clear();
  if (s.hits.empty() || bins < 1) return;
  std::int64_t lo = s.hits.front().dur_ns, hi = lo;
  for (const SearchHit& h : s.hits) lo = std::min(lo, h.dur_ns), hi = std::max(hi, h.dur_ns);
  const double a = static_cast<double>(std::max<std::int64_t>(lo, 1)), b = static_cast<double>(std::max(hi, lo + 1));
  s.edges.push_back(lo);
  for (int i = 1; i < bins; ++i) {
    const auto e =
        static_cast<std::int64_t>(std::floor(a * std::pow(b / a, static_cast<double>(i) / bins) * (1 + 1e-12)));
    if (e > s.edges.back() && e < hi) s.edges.push_back(e);
  }
  s.edges.push_back(std::max(hi, lo + 1));  // the last bin is closed: it holds hi
  s.counts.assign(s.edges.size() - 1, 0);
  s.longest.assign(s.edges.size() - 1, -1);
  for (std::size_t i = 0; i < s.hits.size(); ++i) {
    const int bin = s.bin_of(s.hits[i].dur_ns);
    if (bin < 0) continue;
    ++s.counts[static_cast<std::size_t>(bin)];
    auto& l = s.longest[static_cast<std::size_t>(bin)];
    if (l < 0 || s.hits[i].dur_ns > s.hits[static_cast<std::size_t>(l)].dur_ns) l = static_cast<std::ptrdiff_t>(i);
  }
}

namespace {

SpanSearch run_search(const gb::query::TraceDb& db, const std::string& text, std::size_t cap, int bins) {
  SpanSearch s;
  s.text = text;
  if (text.empty()) return s;
  std::string needle;  // lower-cased, as an SQL string literal
  for (char c : text) {
    needle += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '\'') needle += '\'';
  }
  const std::string from =
      " FROM spans JOIN strings ON strings.id = spans.name_id WHERE instr(lower(strings.text), '" + needle + "') > 0";
  db.each("SELECT spans.id, spans.start_ns, spans.dur_ns" + from + " ORDER BY spans.id LIMIT ?1",
          {static_cast<std::int64_t>(cap)}, [&](const gb::query::Row& r) {
            s.hits.push_back({r.i64(0), r.i64(1), r.i64(2)});
          });
  s.matches = static_cast<std::int64_t>(s.hits.size());
  if (s.hits.size() >= cap) s.matches = db.scalar("SELECT count(*)" + from);
  s.capped = s.matches > static_cast<std::int64_t>(s.hits.size());
  duration_histogram(s, bins);
  return s;
}

}  // namespace

// Shared by the model and the worker's job: the job fills `result` and then sets `done`.
struct TraceModel::SearchJob {
  std::string text;
  std::size_t cap = 0;
  int bins = 0;
  SpanSearch result;
  std::atomic<bool> done{false}, cancelled{false};
};

const SpanSearch* TraceModel::search_async(const std::string& text, std::size_t cap, int bins) {
  if (search_job_ && search_job_->done.load(std::memory_order_acquire)) {
    search_ = std::move(search_job_->result);
    search_job_.reset();
  }
  if (search_ && search_->text == text) return &*search_;
  if (text.empty()) {
    if (search_job_) search_job_->cancelled = true, search_job_.reset();
    search_ = SpanSearch{};
    return &*search_;
  }
  if (search_job_ && search_job_->text == text && search_job_->cap == cap && search_job_->bins == bins) return nullptr;
  if (search_job_) search_job_->cancelled = true;
  auto job = std::make_shared<SearchJob>();
  job->text = text, job->cap = cap, job->bins = bins;
  search_job_ = job;
  queries_->post([job](const gb::query::TraceDb* db) {
    if (!job->cancelled) {
      try {
        if (db) job->result = run_search(*db, job->text, job->cap, job->bins);
      } catch (const std::exception&) {
      }
    }
    job->result.text = job->text;
    job->done.store(true, std::memory_order_release);
  });
  return nullptr;
}

const SpanSearch& TraceModel::search(const std::string& text, std::size_t cap, int bins) {
  if (const SpanSearch* s = search_async(text, cap, bins)) return *s;
  queries_->wait_idle();
  return *search_async(text, cap, bins);
}

void TraceModel::wait_queries() {
  queries_->wait_idle();
  windows_->wait_idle();
  compute_->wait_idle();
  compare_.poll();
  // The job is held here: search_async() drops search_job_ once it is done, and its text is the argument.
  if (const std::shared_ptr<SearchJob> job = search_job_) search_async(job->text, job->cap, job->bins);
}

}  // namespace gb::viewer
