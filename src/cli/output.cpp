#include <cstdio>

#include "command.hpp"
#include "kpkg/io/emit.hpp"

namespace kpkg::cli {

CLI::App* group(CLI::App& root, const std::string& name, const std::string& description) {
    for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; }))
        if (sub->get_name() == name) return sub;
    return root.add_subcommand(name, description);
}

void print(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
}

void print_structured(const Globals& g, const io::Node& doc) {
    if (g.format == Format::yaml)
        print(io::to_yaml(doc));
    else
        print(io::to_json(doc));
}

namespace {
// Display width of UTF-8 text: code points, not bytes (good enough for names and versions).
std::size_t width(const std::string& s) {
    std::size_t w = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++w;
    return w;
}
} // namespace

std::string format_table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> widths;
    for (const auto& r : rows) {
        if (widths.size() < r.size()) widths.resize(r.size(), 0);
        for (std::size_t i = 0; i < r.size(); ++i)
            widths[i] = std::max(widths[i], width(r[i]));
    }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line.append(widths[i] - width(r[i]) + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line;
        out += '\n';
    }
    return out;
}

} // namespace kpkg::cli
