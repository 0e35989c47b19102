// traces/query/follow.h — following a trace while its writer is still running (`glassbox watch`, the viewer's live
// mode): how the run stands, read from meta, and whether the writing process still exists.
//
// Contract:
//   - read_writer_meta(db) reads the meta keys that say who writes the file and how it ended (command, host, pid,
//     detail, closed_cleanly, stopped_by, disk_full) in one short statement: a follower calls it first in each poll,
//     then reads new rows, so rows read after it are at least as new (a closed trace is read to its end).
//   - writer_gone(m, host): the writing process (meta `pid` on meta `host`, which must be `host`) no longer exists.
//     False when either is missing or the host differs (nobody can tell: such a run is followed until it closes).
//   - follow_state(m, host, gone) is the one rule of "still being written" for both followers: closed (meta
//     closed_cleanly), stopped (stopped_by without closed_cleanly: the end is being written), died (neither, and the
//     writer gone), writing (neither, and the writer alive or unknown). A caller that sees `died` should read meta
//     once more before believing it (a writer that closed just after the meta read is not dead): watch sees it twice.
//
//   gb::query::TraceDb db(path);
//   auto m = gb::query::read_writer_meta(db);
//   if (gb::query::follow_state(m, gb::query::this_host()) == gb::query::FollowState::writing) poll_again_later();
#pragma once

#include <optional>
#include <string>

#include "traces/query/trace_db.h"

namespace gb::query {

struct WriterMeta {
  std::optional<std::string> command, host, detail, closed_cleanly, stopped_by, pid, disk_full;
  bool closed() const { return closed_cleanly == "1"; }
  // The writer is known (a pid recorded on this host): only then can a dead writer be told from a quiet one.
  bool writer_known(const std::string& this_host) const { return pid && host && *host == this_host; }
};

WriterMeta read_writer_meta(const TraceDb& db);
std::string this_host();  // gethostname(), "" when it fails
bool writer_gone(const WriterMeta& m, const std::string& host);

enum class FollowState { writing, stopped, closed, died };
FollowState follow_state(const WriterMeta& m, bool gone);

}  // namespace gb::query
