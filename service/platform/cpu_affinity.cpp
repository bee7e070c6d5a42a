#include "cpu_affinity.hpp"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace xrc::platform {
namespace {

// "0-3,6": the CPUs for a message, ranges folded.
std::string describe(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t last = i;
    while (last + 1 < cpus.size() && cpus[last + 1] == cpus[last] + 1) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (last > i) out += '-' + std::to_string(cpus[last]);
    i = last + 1;
  }
  return out.empty() ? "none" : out;
}

}  // namespace

Result<std::vector<int>> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) {
    return makeError(ErrorCode::internal, "the CPUs this process may run on are unknown (sched_getaffinity: {})",
                     std::strerror(errno));
  }
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  }
  return out;
}

Status cpuAllowed(int cpu) {
  auto allowed = allowedCpus();
  if (!allowed) return Status(allowed.error());
  for (int c : allowed.value()) {
    if (c == cpu) return {};
  }
  return makeError(ErrorCode::invalidArgument, "CPU {} is not one this process may run on ({})", cpu,
                   describe(allowed.value()));
}

Status keepCallingThreadOn(int cpu) {
  if (auto allowed = cpuAllowed(cpu); !allowed) return allowed;
  return letCallingThreadRunOn({cpu});
}

Status letCallingThreadRunOn(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  }
  // pid 0: the calling thread alone (Linux keeps an affinity mask per thread).
  if (CPU_COUNT(&set) == 0 || ::sched_setaffinity(0, sizeof(set), &set) != 0) {
    return makeError(ErrorCode::internal, "letting the thread run on CPUs {}: {}", describe(cpus),
                     CPU_COUNT(&set) == 0 ? "none given" : std::strerror(errno));
  }
  return {};
}

int keptCpu() {
  auto allowed = allowedCpus();
  return allowed && allowed.value().size() == 1 ? allowed.value().front() : -1;
}

}  // namespace xrc::platform
