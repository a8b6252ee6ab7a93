// A unified diff of two texts, for every area that shows one: pko (a rendered template against
// its test fixture, as kubectl-package shows it) and kube (apply --diff, live objects against
// the ones to apply).
#pragma once

#include <string>
#include <string_view>

namespace kpkg::text {

// `diff -u --label label_a --label label_b` of two texts, without the trailing newline ("" when
// equal). Lines keep their newline, so "a" and "a\n" differ (with diff's "\ No newline at end of
// file"). Time and memory are bounded: past 2000 edits the texts are shown as wholly different.
std::string unified_diff(std::string_view a, std::string_view b, const std::string& label_a,
                         const std::string& label_b);

} // namespace kpkg::text
