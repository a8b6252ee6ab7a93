// Small pieces the pko area shares: Go's spellings and Kubernetes' name rules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::pko {

// A YAML node as Go holds it after sigs.k8s.io/yaml: JSON (plain scalars typed as yaml.v2 types
// them, keys sorted). Errors: a value JSON cannot hold (.inf, .nan).
Result<io::Node> to_json_node(const io::Node& node);

// apimachinery's IsQualifiedName and IsValidLabelValue: the messages, none when valid.
std::vector<std::string> qualified_name_errors(std::string_view value);
std::vector<std::string> label_value_errors(std::string_view value);
std::vector<std::string> dns1123_subdomain_errors(std::string_view value);

} // namespace kpkg::pko
