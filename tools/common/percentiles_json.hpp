// A status percentile pair as the tools' JSON writes it: {"p50": ..., "p99": ...}.
#pragma once

#include <nlohmann/json.hpp>

#include "xrc/control.hpp"

namespace xrc::tools {

inline nlohmann::json percentilesJson(const control::Percentiles& p) { return {{"p50", p.p50}, {"p99", p.p99}}; }

}  // namespace xrc::tools
