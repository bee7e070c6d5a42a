#include "log.hpp"

#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace xrc::log {
namespace {
std::atomic<Level> gLevel{Level::info};
const char* name(Level level) {
  switch (level) {
    case Level::trace:
      return "trace";
    case Level::debug:
      return "debug";
    case Level::info:
      return "info";
    case Level::warn:
      return "warn";
    case Level::error:
      return "error";
  }
  return "?";
}
}  // namespace

void setLevel(Level level) { gLevel = level; }
bool enabled(Level level) { return level >= gLevel.load(std::memory_order_relaxed); }

bool parseLevel(std::string_view text, Level& out) {
  for (Level l : {Level::trace, Level::debug, Level::info, Level::warn, Level::error}) {
    if (text == name(l)) {
      out = l;
      return true;
    }
  }
  return false;
}

namespace {
// systemd sets JOURNAL_STREAM=<dev>:<inode> of the stream it connected stderr to; if stderr still
// is that stream, entries go to the journal directly, with fields.
bool stderrIsJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  return ::fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

int syslogPriority(Level level) {
  switch (level) {
    case Level::trace:
    case Level::debug:
      return 7;
    case Level::info:
      return 6;
    case Level::warn:
      return 4;
    case Level::error:
      return 3;
  }
  return 6;
}
}  // namespace

std::vector<std::string> journalFields(Level level, std::string_view message, const ClientFields* client) {
  std::vector<std::string> fields{"MESSAGE=" + std::string(message),
                                  "PRIORITY=" + std::to_string(syslogPriority(level)),
                                  "SYSLOG_IDENTIFIER=xr-compositord"};
  if (client != nullptr) {
    fields.push_back("XRC_CLIENT_ID=" + std::to_string(client->id));
    fields.push_back("XRC_CLIENT_PID=" + std::to_string(client->pid));
    fields.push_back("XRC_CLIENT_NAME=" + client->name);
  }
  return fields;
}

void write(Level level, std::string_view message, const ClientFields* client) {
  static const bool journal = stderrIsJournal();
  if (journal) {
    const auto fields = journalFields(level, message, client);
    std::vector<iovec> iov;
    for (const auto& f : fields) iov.push_back({const_cast<char*>(f.data()), f.size()});
    if (sd_journal_sendv(iov.data(), int(iov.size())) == 0) return;
    // The journal socket is gone: fall through to the stream systemd also reads.
  }
  // One fprintf per line keeps lines from different threads whole.
  std::fprintf(stderr, "xr-compositord [%s] %.*s\n", name(level), int(message.size()), message.data());
}

}  // namespace xrc::log
