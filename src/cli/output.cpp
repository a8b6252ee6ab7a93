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

} // namespace kpkg::cli
