#include "refusals.hpp"

#include <utility>

#include "../log.hpp"
#include "xrc/monotonic_clock.hpp"

namespace xrc {

void Refusals::record(std::string_view limit, std::string_view what) { (void)recordAt(limit, what, monotonicNowNs()); }

bool Refusals::recordAt(std::string_view limit, std::string_view what, int64_t nowNs) {
  uint64_t unlogged = 0;
  {
    Lock lock(mutex_);
    auto it = entries_.find(limit);
    if (it == entries_.end()) it = entries_.emplace(std::string(limit), Entry{}).first;
    Entry& e = it->second;
    e.count++;
    e.lastNs = nowNs;
    if (e.loggedNs != 0 && nowNs - e.loggedNs < kLogIntervalNs) {
      e.unlogged++;
      return false;
    }
    e.loggedNs = nowNs;
    unlogged = std::exchange(e.unlogged, 0);
  }
  if (unlogged > 0) {
    log::warn("{} ({}; {} more refusals under it since the last warning)", what, limit, unlogged);
  } else {
    log::warn("{} ({})", what, limit);
  }
  return true;
}

std::vector<Refusals::Count> Refusals::snapshot() const {
  Lock lock(mutex_);
  std::vector<Count> out;
  out.reserve(entries_.size());
  for (const auto& [limit, e] : entries_) out.push_back(Count{limit, e.count, e.lastNs});
  return out;
}

}  // namespace xrc
