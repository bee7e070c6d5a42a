#include "cpu_load.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace xrc::platform {
namespace {

// Unsigned decimal numbers separated by blanks, from the start of `text`.
std::vector<uint64_t> numbers(std::string_view text) {
  std::vector<uint64_t> out;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (;;) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (p == end) break;
    uint64_t value = 0;
    auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc{}) break;
    out.push_back(value);
    p = next;
  }
  return out;
}

Result<std::string> readFile(const char* path) {
  std::ifstream in(path);
  if (!in) return makeError(ErrorCode::internal, "cannot read {}: {}", path, std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Result<std::vector<CpuTimes>> parseCpuTimes(std::string_view procStat) {
  std::vector<CpuTimes> out;
  size_t lineNumber = 0;
  while (!procStat.empty()) {
    const size_t eol = procStat.find('\n');
    std::string_view line = procStat.substr(0, eol);
    procStat.remove_prefix(eol == std::string_view::npos ? procStat.size() : eol + 1);
    ++lineNumber;
    // "cpu " is the sum of all; "cpuN" one CPU's.
    if (line.size() < 4 || line.substr(0, 3) != "cpu" || line[3] < '0' || line[3] > '9') continue;
    line.remove_prefix(3);
    int cpu = 0;
    auto [rest, ec] = std::from_chars(line.data(), line.data() + line.size(), cpu);
    const std::vector<uint64_t> t =
        ec == std::errc{} ? numbers(std::string_view(rest, line.data() + line.size() - rest)) : std::vector<uint64_t>{};
    // user nice system idle iowait irq softirq [steal guest guest_nice]; guest time is in user's.
    if (t.size() < 7) {
      return makeError(ErrorCode::internal, "/proc/stat line {} is not a CPU's times: '{}'", lineNumber,
                       std::string(line.substr(0, 80)));
    }
    CpuTimes times;
    times.cpu = cpu;
    times.busy = t[0] + t[1] + t[2] + t[5] + t[6] + (t.size() > 7 ? t[7] : 0);
    times.total = times.busy + t[3] + t[4];
    out.push_back(times);
  }
  std::sort(out.begin(), out.end(), [](const CpuTimes& a, const CpuTimes& b) { return a.cpu < b.cpu; });
  return out;
}

Result<std::vector<CpuTimes>> readCpuTimes() {
  auto text = readFile("/proc/stat");
  if (!text) return text.error();
  return parseCpuTimes(text.value());
}

Result<ThreadSchedule> parseThreadSchedule(std::string_view schedstat) {
  const std::vector<uint64_t> n = numbers(schedstat);
  if (n.size() < 3) {
    return makeError(ErrorCode::internal, "a thread's schedstat is not three numbers: '{}'",
                     std::string(schedstat.substr(0, 80)));
  }
  return ThreadSchedule{n[0], n[1], n[2]};
}

Result<ThreadSchedule> readCallingThreadSchedule() {
  auto text = readFile("/proc/thread-self/schedstat");
  if (!text) return text.error();
  return parseThreadSchedule(text.value());
}

}  // namespace xrc::platform
