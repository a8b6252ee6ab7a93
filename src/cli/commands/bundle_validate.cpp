// kpkg bundle validate: every problem of one or more registry+v1 bundle directories in one run.
//
// Text output, one line per finding, grouped per bundle, then a line per bundle and a summary:
//   DIR/manifests/x.yaml:12:5: error: message [rule]
//   DIR: invalid: 1 error, 2 warnings
//   2 bundles: 1 valid, 1 invalid; 1 error, 2 warnings
//
// -o json / -o yaml write one document:
//   {"bundles": [{"dir": "DIR", "valid": true, "errors": 0, "warnings": 2,
//                 "findings": [{"severity": "error"|"warning", "rule": "csv.version",
//                               "message": "...", "file": "DIR/manifests/x.yaml",
//                               "line": 12, "column": 5, "subject": ""}]}],
//    "errors": 0, "warnings": 2}
// Every key is always present; file is "" and line/column 0 when unknown.
//
// Exit codes: 0 no errors, 3 errors found (with --strict, warnings count as errors), 1 when a
// directory (or a file or directory in it, or a dangling link) could not be read, 2 when an
// argument is not a directory at all (a stray file, a path that does not exist: reported on stderr,
// the other bundles still validated) and no bundle has errors.
#include <filesystem>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/report.hpp"
#include "kpkg/bundle/validate.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/oci/location.hpp"

namespace kpkg::cli {
namespace {

struct ValidateCliOptions {
    std::vector<std::string> dirs;
    bool strict = false;
    std::string k8s_version;
};

// Why `arg` cannot be a bundle directory at all, or "" when it is a directory (or cannot be
// looked at, which loading reports as an I/O error).
std::string not_a_directory(const std::string& arg) {
    if (auto where = oci::locate(arg); where && where->is_image()) return {};
    std::error_code ec;
    const auto st = std::filesystem::status(arg, ec);
    if (st.type() == std::filesystem::file_type::not_found) return "no such file or directory";
    if (ec || std::filesystem::is_directory(st)) return {};
    return "not a directory";
}

std::string paint(bool color, const char* code, const std::string& s) {
    if (!color) return s;
    return std::string("\033[") + code + "m" + s + "\033[0m";
}

// One finding line, with the severity word coloured on a terminal.
std::string line_of(const bundle::Finding& f, const std::string& dir, bool color) {
    std::string s = bundle::format(f, dir);
    if (!color) return s;
    std::string word = std::string(bundle::severity_name(f.severity)) + ":";
    auto at = s.find(" " + word);
    if (at == std::string::npos && s.compare(0, word.size(), word) == 0)
        at = 0;
    else if (at != std::string::npos)
        ++at;
    if (at == std::string::npos) return s;
    const char* code = f.severity == bundle::Severity::error ? "1;31" : "1;33";
    return s.substr(0, at) + paint(true, code, word) + s.substr(at + word.size());
}

int run_validate(const Globals& g, const ValidateCliOptions& o) {
    bundle::ValidateOptions vopts;
    vopts.strict = o.strict;
    if (!o.k8s_version.empty()) {
        vopts.k8s_version = bundle::parse_kube_release(o.k8s_version);
        if (!vopts.k8s_version)
            throw Exception(Error::usage("--k8s-version " + text::quote(o.k8s_version) +
                                         " is not a Kubernetes version such as 1.25"));
    }
    std::vector<bundle::BundleReport> reports; // -o json|yaml
    std::string out;
    std::size_t errors = 0, warnings = 0, invalid = 0, validated = 0;
    bool unreadable = false, misused = false;
    std::vector<CiUnit> units; // -o junit|github

    for (const auto& dir : o.dirs) {
        // An argument that is no directory is a mistake on the command line, not a bundle: said
        // on stderr, and the others are still validated.
        if (std::string why = not_a_directory(dir); !why.empty()) {
            log::error(text::quote(dir) + ": " + why +
                       "; each argument of 'kpkg bundle validate' is a bundle directory "
                       "(with manifests/ and metadata/)");
            misused = true;
            continue;
        }
        ++validated;
        std::vector<bundle::Finding> findings;
        // An image that cannot be read (a registry that fails, an image of another kind) is
        // this argument's error; the other bundles are still validated.
        Result<bundle::Loaded> loaded = fail(Error::internal("not loaded"));
        try {
            loaded = bundle::load(*open_input(dir, Want::bundle));
        } catch (const Exception& e) {
            loaded = fail(e.error());
        }
        if (!loaded) {
            const Error& e = loaded.error();
            bundle::Finding f;
            f.severity = bundle::Severity::error;
            f.rule = "bundle.load";
            f.message = e.message;
            f.pos = e.pos;
            f.subject = e.subject;
            findings.push_back(std::move(f));
            if (e.code != ExitCode::invalid) unreadable = true;
        } else {
            findings = bundle::validate(*loaded, vopts);
            // A file or directory of the bundle that could not be read: the report is incomplete.
            for (const auto& b : loaded->blocking)
                if (b.code == ExitCode::error) unreadable = true;
        }
        std::size_t e = bundle::count(findings, bundle::Severity::error);
        std::size_t w = bundle::count(findings, bundle::Severity::warning);
        errors += e;
        warnings += w;
        if (e > 0) ++invalid;
        units.push_back({dir, {findings.begin(), findings.end()}});

        if (g.format == Format::text) {
            for (const auto& f : findings)
                out += line_of(f, dir, g.color_stdout) + "\n";
            std::string verdict = e > 0 ? paint(g.color_stdout, "1;31", "invalid")
                                        : paint(g.color_stdout, "32", "valid");
            out += dir + ": " + verdict;
            if (e > 0 || w > 0) out += ": " + counts(e, w);
            out += "\n";
        } else {
            reports.push_back({dir, std::move(findings)});
        }
    }

    if (g.format == Format::junit || g.format == Format::github) {
        print(g.format == Format::junit ? format_junit("kpkg bundle validate", units)
                                        : format_github(units));
    } else if (g.format == Format::text) {
        out += plural(validated, "bundle") + ": " + std::to_string(validated - invalid) +
               " valid, " + std::to_string(invalid) + " invalid; " + plural(errors, "error") +
               ", " + plural(warnings, "warning") + "\n";
        print(out);
    } else {
        print_structured(g, bundle::validate_report_node(reports));
    }
    if (unreadable) return static_cast<int>(ExitCode::error);
    if (errors > 0) return static_cast<int>(ExitCode::invalid);
    return misused ? static_cast<int>(ExitCode::usage) : 0;
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* b = group(root, "bundle", "Inspect, validate and render OLM registry+v1 bundles");
    auto opts = std::make_shared<ValidateCliOptions>();
    CLI::App* v = b->add_subcommand(
        "validate", "Check registry+v1 bundle directories and report every problem found");
    v->add_option("DIR", opts->dirs, "Bundle directories (each with manifests/ and metadata/)")
        ->required()
        ->default_str("");
    v->add_flag("--strict", opts->strict, "Treat warnings as errors");
    v->add_option("--k8s-version", opts->k8s_version,
                  "Kubernetes release the bundles are for: objects using an API version it no "
                  "longer serves are errors, not warnings")
        ->option_text("VERSION");
    v->footer("Each problem is printed as FILE:LINE:COL: SEVERITY: MESSAGE [RULE].\n"
              "With -o json: {\"bundles\": [{\"dir\", \"valid\", \"errors\", \"warnings\",\n"
              "\"findings\": [{\"severity\", \"rule\", \"message\", \"file\", \"line\", "
              "\"column\",\n\"subject\"}]}], \"errors\", \"warnings\"}.\n"
              "With -o junit: JUnit XML; with -o github: GitHub workflow annotations.\n"
              "Exit status: 0 valid, 3 errors found (--strict: or warnings), 1 unreadable "
              "directory,\n2 an argument that is not a directory (when no bundle has errors).");
    accept_ci_formats(v);
    v->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_validate(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(bundle_validate, 11, setup);

} // namespace kpkg::cli
