// traces/query/follow.cpp — meta of a trace being written and its writer's liveness (contract in follow.h).
#include "traces/query/follow.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <utility>

namespace gb::query {

WriterMeta read_writer_meta(const TraceDb& db) {
  WriterMeta m;
  const std::pair<std::string_view, std::optional<std::string> WriterMeta::*> keys[] = {
      {"command", &WriterMeta::command},       {"host", &WriterMeta::host},
      {"detail", &WriterMeta::detail},         {"closed_cleanly", &WriterMeta::closed_cleanly},
      {"stopped_by", &WriterMeta::stopped_by}, {"pid", &WriterMeta::pid},
      {"disk_full", &WriterMeta::disk_full}};
  db.each(
      "SELECT key, value FROM meta WHERE key IN ('command', 'host', 'detail', 'closed_cleanly', 'stopped_by', 'pid', "
      "'disk_full')",
      [&](const Row& r) {
        for (const auto& [key, member] : keys)
          if (r.text(0) == key) m.*member = std::string(r.text(1));
      });
  return m;
}

std::string this_host() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

bool writer_gone(const WriterMeta& m, const std::string& host) {
  if (!m.writer_known(host)) return false;
  char* end = nullptr;
  const long pid = std::strtol(m.pid->c_str(), &end, 10);
  if (end == m.pid->c_str() || *end != '\0' || pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

FollowState follow_state(const WriterMeta& m, bool gone) {
  if (m.closed()) return FollowState::closed;
  if (m.stopped_by) return FollowState::stopped;
  return gone ? FollowState::died : FollowState::writing;
}

}  // namespace gb::query
