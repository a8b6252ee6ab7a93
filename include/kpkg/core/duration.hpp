// Durations as Go writes and reads them, for flags (--timeout, --request-timeout) and messages.
#pragma once

#include <chrono>
#include <string>

#include "kpkg/core/result.hpp"

namespace kpkg {

// Go's time.ParseDuration for the positive durations flags take ("90s", "5m", "1h30m", "250ms");
// Errors (exit 2): anything else, naming `flag`.
Result<std::chrono::milliseconds> parse_duration(const std::string& text, const std::string& flag);
// A duration as Go prints one: "5s", "1m30s", "250ms", "1.5s".
std::string format_duration(std::chrono::milliseconds d);

} // namespace kpkg
