// What `kpkg plan` and `kpkg install` share: the flags that turn a resolution into an InstallPlan
// (-n, --approval, --catalog-namespace, --bundle-dir) and into a GitOps tree (--target-namespaces,
// --catalog-image, --sync-waves, --cert-provider), and the pipeline itself: load the catalogs,
// resolve, gather the bundles' contents, make the plan.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "kpkg/plan/installplan.hpp"
#include "kpkg/plan/tree.hpp"
#include "requests.hpp"

namespace kpkg::cli {

struct PlanFlags {
    RequestFlags req;
    std::string namespace_name;
    std::string approval = "Automatic";
    std::string catalog_namespace = "olm";
    std::vector<std::string> bundle_dirs;
};

struct TreeFlags {
    std::string format; // olm | manifests
    std::vector<std::string> target_namespaces;
    std::vector<std::string> catalog_images;
    bool sync_waves = false;
    std::string cert_provider;
};

// Adds --namespace/-n (required), --approval, --catalog-namespace and --bundle-dir.
void add_plan_flags(CLI::App* cmd, PlanFlags& f, const std::string& namespace_help);
// Adds --target-namespaces, --catalog-image and --cert-provider (and --sync-waves when
// `sync_waves`); the format flag is the command's own.
void add_tree_flags(CLI::App* cmd, TreeFlags& f, bool sync_waves);

// The tree options of the flags; `format_flag` names the flag that chose the format in messages
// ("--format", "--mode"). Usage errors (exit 2) before anything is loaded. Throws Exception.
plan::TreeOptions tree_options(const TreeFlags& f, const std::string& format_flag);

// Loads the catalogs, resolves the requests (one hop per operator, as one InstallPlan does),
// gathers the selected bundles' contents and makes the InstallPlan; its warnings include the
// resolution's and the contents'. `outputs`: what the command will write, checked against the
// inputs before anything is read (check_output_outside). Throws Exception (exit 4 when there is
// no solution).
plan::InstallPlan make_plan(const Globals& g, const PlanFlags& f,
                            const std::vector<OutputPath>& outputs = {});

// Checks the plan flags before anything is loaded (namespaces, --source without a request).
void check_plan_flags(const PlanFlags& f);

} // namespace kpkg::cli
