// Go's spellings and Kubernetes' name rules (k8s.io/apimachinery/pkg/util/validation).
#include "kpkg/pko/util.hpp"

#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/model/names.hpp"

namespace kpkg::pko {
namespace {

bool alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool qualified_name_ok(std::string_view s) {
    if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
    for (char c : s)
        if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
    return true;
}

std::string regex_error(const std::string& msg, const std::string& fmt,
                        std::initializer_list<const char*> examples) {
    std::string s = msg + " (e.g. ";
    bool first = true;
    for (const char* e : examples) {
        if (!first) s += " or ";
        first = false;
        s += "'";
        s += e;
        s += "', ";
    }
    return s + "regex used for validation is '" + fmt + "')";
}

const std::string kQualifiedNameMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
const std::string kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

} // namespace

Result<io::Node> to_json_node(const io::Node& node) {
    std::string json;
    if (!io::go::append_marshal(json, node, false))
        return fail(Error::invalid("json: unsupported value (.inf or .nan)"));
    auto docs = io::parse_json(json, "<json>");
    if (!docs) return fail(std::move(docs).error());
    if (docs->empty()) return io::Node{};
    return std::move((*docs)[0].root);
}

std::vector<std::string> dns1123_subdomain_errors(std::string_view value) {
    std::vector<std::string> out;
    if (value.size() > 253) out.push_back("must be no more than 253 characters");
    if (!model::check_dns1123_subdomain(value).pattern_ok())
        out.push_back(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character",
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", {"example.com"}));
    return out;
}

std::vector<std::string> qualified_name_errors(std::string_view value) {
    std::vector<std::string> out;
    std::string_view name = value;
    const auto slash = value.find('/');
    if (slash != std::string_view::npos) {
        if (value.find('/', slash + 1) != std::string_view::npos) {
            out.push_back("a qualified name " +
                          regex_error(kQualifiedNameMsg, kQualifiedNameFmt,
                                      {"MyName", "my.name", "123-abc"}) +
                          " with an optional DNS subdomain prefix and '/' (e.g. "
                          "'example.com/MyName')");
            return out;
        }
        const std::string_view prefix = value.substr(0, slash);
        name = value.substr(slash + 1);
        if (prefix.empty())
            out.push_back("prefix part must be non-empty");
        else
            for (const std::string& m : dns1123_subdomain_errors(prefix))
                out.push_back("prefix part " + m);
    }
    if (name.empty())
        out.push_back("name part must be non-empty");
    else if (name.size() > 63)
        out.push_back("name part must be no more than 63 characters");
    if (!name.empty() && !qualified_name_ok(name))
        out.push_back("name part " + regex_error(kQualifiedNameMsg, kQualifiedNameFmt,
                                                 {"MyName", "my.name", "123-abc"}));
    return out;
}

std::vector<std::string> label_value_errors(std::string_view value) {
    std::vector<std::string> out;
    if (value.size() > 63) out.push_back("must be no more than 63 characters");
    if (!value.empty() && !qualified_name_ok(value))
        out.push_back(regex_error("a valid label must be an empty string or consist of "
                                  "alphanumeric characters, '-', '_' or '.', and must start and "
                                  "end with an alphanumeric character",
                                  "(" + kQualifiedNameFmt + ")?",
                                  {"MyValue", "my_value", "12345"}));
    return out;
}

} // namespace kpkg::pko
