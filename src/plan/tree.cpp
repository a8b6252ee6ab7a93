// GitOps trees of a plan: the olm format (Subscriptions and what they need) and the manifests
// format (the objects OLM v1 makes of registry+v1 bundles).
#include "kpkg/plan/tree.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/go.hpp"
#include "permissions.hpp"
#include "webhooks.hpp"

namespace kpkg::plan {

Result<TreeFormat> parse_tree_format(std::string_view s) {
    if (s == "olm") return TreeFormat::olm;
    if (s == "manifests") return TreeFormat::manifests;
    return Error::usage("--format " + text::quote(s) + ": give olm or manifests");
}

namespace {

using io::Node;

constexpr const char* wave_key = "argocd.argoproj.io/sync-wave";

Node& ensure_map(Node& parent, const std::string& k) {
    Node* n = parent.get(k);
    if (n == nullptr || !n->is_map()) return parent.set(k, Node::map());
    return *n;
}

// apiVersion, kind and metadata {name, namespace?}: the head of an object kpkg makes.
Node object(const std::string& api_version, const std::string& kind, const std::string& name,
            const std::string& ns = {}) {
    Node o = Node::map();
    o.set("apiVersion", Node::string(api_version));
    o.set("kind", Node::string(kind));
    Node& meta = o.set("metadata", Node::map());
    meta.set("name", Node::string(name));
    if (!ns.empty()) meta.set("namespace", Node::string(ns));
    return o;
}

Node strings(const std::vector<std::string>& v) {
    Node l = Node::seq();
    for (const auto& s : v)
        l.push(Node::string(s));
    return l;
}

// The kinds of bundle objects that live in a namespace (registry+v1's supported kinds).
bool namespaced(std::string_view kind) {
    static const std::set<std::string_view> kinds = {"Secret",
                                                     "ConfigMap",
                                                     "Service",
                                                     "ServiceAccount",
                                                     "Role",
                                                     "RoleBinding",
                                                     "PrometheusRule",
                                                     "ServiceMonitor",
                                                     "PodDisruptionBudget",
                                                     "NetworkPolicy",
                                                     "VerticalPodAutoscaler"};
    return kinds.count(kind) != 0;
}

// An object of the tree and where it goes.
struct Placed {
    std::string folder;
    Node node;
    int wave = 0;
};

// --- install modes -------------------------------------------------------------------------------

std::set<std::string> supported_modes(const Node& csv) {
    std::set<std::string> out;
    if (const Node* modes = csv.at_path({"spec", "installModes"});
        modes != nullptr && modes->is_seq())
        for (const auto& m : modes->items) {
            const Node* sup = m.get("supported");
            if (sup != nullptr && sup->as_bool().value_or(false)) out.insert(m.text_at({"type"}));
        }
    return out;
}

// OLM's rule (an OperatorGroup's namespaces against the CSV's install modes): all namespaces
// need AllNamespaces; the install namespace alone OwnNamespace; another single namespace
// SingleNamespace; several namespaces MultiNamespace (and OwnNamespace when the install
// namespace is among them).
Result<void> check_install_modes(const std::string& bundle, const Node& csv, const std::string& ns,
                                 const std::vector<std::string>& targets) {
    const std::set<std::string> modes = supported_modes(csv);
    std::string need, what;
    if (targets.empty()) {
        need = "AllNamespaces";
        what = "watch all namespaces (no --target-namespaces given)";
    } else if (targets.size() == 1 && targets[0] == ns) {
        need = "OwnNamespace";
        what = "watch only its own namespace " + text::quote(ns);
    } else if (targets.size() == 1) {
        need = "SingleNamespace";
        what = "watch the single namespace " + text::quote(targets[0]);
    } else {
        need = "MultiNamespace";
        what = "watch " + std::to_string(targets.size()) + " namespaces";
        if (modes.count(need) && std::find(targets.begin(), targets.end(), ns) != targets.end() &&
            !modes.count("OwnNamespace")) {
            need = "OwnNamespace";
            what = "watch its own namespace " + text::quote(ns) + " among others";
        }
    }
    if (modes.count(need)) return {};
    return Error::usage(
        "bundle " + text::quote(bundle) + " cannot " + what + ": install mode " + need +
        " is not supported (its CSV supports " +
        (modes.empty() ? std::string("none")
                       : text::join(std::vector<std::string>(modes.begin(), modes.end()), ", ")) +
        "); choose --target-namespaces accordingly");
}

// --- dependency order ----------------------------------------------------------------------------

// The operators with every dependency before what requires it: a bundle "required by B" goes
// before B (deepest first), the resolver's order otherwise.
std::vector<const PlannedOperator*> dependency_order(const InstallPlan& plan) {
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < plan.operators.size(); ++i)
        index[plan.operators[i].selected.bundle] = i;
    std::vector<int> depth(plan.operators.size(), -1);
    std::function<int(std::size_t, int)> depth_of = [&](std::size_t i, int guard) -> int {
        if (depth[i] >= 0) return depth[i];
        int d = 0;
        const std::string& why = plan.operators[i].selected.reason;
        const std::string prefix = "required by ";
        if (why.rfind(prefix, 0) == 0 && guard < static_cast<int>(plan.operators.size())) {
            std::string by = why.substr(prefix.size());
            by = by.substr(0, by.find(' '));
            if (auto it = index.find(by); it != index.end() && it->second != i)
                d = depth_of(it->second, guard + 1) + 1;
        }
        return depth[i] = d;
    };
    std::vector<const PlannedOperator*> out;
    for (std::size_t i = 0; i < plan.operators.size(); ++i) {
        depth_of(i, 0);
        out.push_back(&plan.operators[i]);
    }
    std::stable_sort(out.begin(), out.end(),
                     [&](const PlannedOperator* a, const PlannedOperator* b) {
                         return depth[index[a->selected.bundle]] > depth[index[b->selected.bundle]];
                     });
    return out;
}

// --- the manifests format (OLM v1's conversion) --------------------------------------------------

// The name OLM v1 gives the RBAC of a permission: <csv>-<serviceAccount>-<hash>, the hash base36
// of the SHA-224 of the permission as json.Encoder writes it, the base cut to fit 63 characters.
std::string v1_rbac_name(const std::string& csv, const detail::Permission& p) {
    std::string json = "{\"serviceAccountName\":";
    io::go::append_string(json, p.service_account, true);
    json += ",\"rules\":";
    json += detail::rules_json(p);
    json += "}\n";
    const std::string sa = p.service_account.empty() ? "default" : p.service_account;
    return rbac_name(csv + "-" + sa, base36_sha224(json));
}

Node rules_node(const detail::Permission& p) {
    Node l = Node::seq();
    for (const auto& r : p.rules)
        l.push(detail::rule_node(r));
    return l;
}

Node binding(const char* kind, const char* role_kind, const std::string& name,
             const std::string& ns, const std::string& sa, const std::string& install_ns) {
    Node b = object("rbac.authorization.k8s.io/v1", kind, name, ns);
    Node subj = Node::map();
    subj.set("kind", Node::string("ServiceAccount"));
    subj.set("name", Node::string(sa));
    subj.set("namespace", Node::string(install_ns));
    b.set("subjects", Node::seq()).push(std::move(subj));
    Node& ref = b.set("roleRef", Node::map());
    ref.set("apiGroup", Node::string("rbac.authorization.k8s.io"));
    ref.set("kind", Node::string(role_kind));
    ref.set("name", Node::string(name));
    return b;
}

Result<void> refuse_for_v1(const PlannedOperator& op, CertProvider provider) {
    const std::string bundle = text::quote(op.selected.bundle);
    const Node* hooks = op.csv.at_path({"spec", "webhookdefinitions"});
    if (provider == CertProvider::none && hooks != nullptr && hooks->is_seq() &&
        !hooks->items.empty()) {
        std::vector<std::string> names;
        for (const auto& h : hooks->items)
            names.push_back(h.text_at({"type"}) + " " + h.text_at({"generateName"}));
        return Error::invalid(
            "bundle " + bundle +
            ": its CSV defines webhooks (spec.webhookdefinitions: " + text::join(names, ", ") +
            "); without OLM their serving certificates need a certificate provider: give "
            "--cert-provider cert-manager or openshift-service-ca, or install this operator "
            "with OLM (--format olm)");
    }
    const Node* apis = op.csv.at_path({"spec", "apiservicedefinitions", "owned"});
    if (apis != nullptr && apis->is_seq() && !apis->items.empty()) {
        std::vector<std::string> names;
        for (const auto& a : apis->items)
            names.push_back(a.text_at({"version"}) + "." + a.text_at({"group"}));
        return Error::invalid(
            "bundle " + bundle +
            ": its CSV owns APIServices (spec.apiservicedefinitions: " + text::join(names, ", ") +
            "), which OLM v1 does not install without OLM: install this "
            "operator with OLM (--format olm)");
    }
    return {};
}

Result<void> manifests_of(const PlannedOperator& op, const std::string& ns,
                          const std::vector<std::string>& targets, CertProvider provider,
                          std::vector<Placed>& out) {
    if (auto r = refuse_for_v1(op, provider); !r) return r;
    const std::string folder = op.selected.package;
    const std::string& csv = op.selected.bundle;
    const Node* install = op.csv.at_path({"spec", "install", "spec"});
    auto perms = detail::permissions_of(install ? install->get("permissions") : nullptr);
    auto cluster = detail::permissions_of(install ? install->get("clusterPermissions") : nullptr);
    const bool all_namespaces = targets.empty();

    std::vector<Node> crds;
    for (const auto& o : op.objects)
        if (o.text_at({"kind"}) == "CustomResourceDefinition") crds.push_back(o);
    auto hooks = detail::webhook_objects(csv, op.csv, crds, ns, targets, provider);
    if (!hooks) return std::move(hooks).error();
    for (auto& crd : crds) {
        const std::string name = crd.text_at({"metadata", "name"});
        if (auto it = hooks->conversions.find(name); it != hooks->conversions.end()) {
            ensure_map(crd, "spec").set("conversion", it->second);
            Node& ann = ensure_map(ensure_map(crd, "metadata"), "annotations");
            for (const auto& [k, v] : hooks->crd_annotations[name])
                ann.set(k, Node::string(v));
        }
        out.push_back({folder, std::move(crd), 1});
    }

    std::set<std::string> accounts;
    for (const auto* list : {&perms, &cluster})
        for (const auto& p : *list)
            accounts.insert(p.service_account.empty() ? "default" : p.service_account);
    for (const auto& sa : accounts)
        if (sa != "default") out.push_back({folder, object("v1", "ServiceAccount", sa, ns), 2});

    if (!all_namespaces)
        for (const auto& target : targets)
            for (const auto& p : perms) {
                const std::string name = v1_rbac_name(csv, p);
                const std::string sa = p.service_account.empty() ? "default" : p.service_account;
                Node role = object("rbac.authorization.k8s.io/v1", "Role", name, target);
                role.set("rules", rules_node(p));
                out.push_back({folder, std::move(role), 2});
                out.push_back({folder, binding("RoleBinding", "Role", name, target, sa, ns), 2});
            }
    std::vector<detail::Permission> cluster_all = cluster;
    if (all_namespaces)
        for (auto p : perms) {
            // Watching all namespaces, the namespaced permissions become cluster-wide, with
            // the right to read namespaces (as OLM does).
            detail::Rule r;
            r.has_verbs = true;
            r.verbs = {"get", "list", "watch"};
            r.api_groups = {""};
            r.resources = {"namespaces"};
            p.has_rules = true;
            p.rules.push_back(std::move(r));
            cluster_all.push_back(std::move(p));
        }
    for (const auto& p : cluster_all) {
        const std::string name = v1_rbac_name(csv, p);
        const std::string sa = p.service_account.empty() ? "default" : p.service_account;
        Node role = object("rbac.authorization.k8s.io/v1", "ClusterRole", name);
        role.set("rules", rules_node(p));
        out.push_back({folder, std::move(role), 2});
        out.push_back({folder, binding("ClusterRoleBinding", "ClusterRole", name, "", sa, ns), 2});
    }

    for (auto& o : hooks->cert_objects)
        out.push_back({folder, std::move(o), 3});
    for (const auto& o : op.objects) {
        const std::string kind = o.text_at({"kind"});
        if (kind == "CustomResourceDefinition") continue;
        Node copy = o;
        if (namespaced(kind)) ensure_map(copy, "metadata").set("namespace", Node::string(ns));
        out.push_back({folder, std::move(copy), 3});
    }
    for (auto& o : hooks->services)
        out.push_back({folder, std::move(o), 3});

    // Deployments of the install strategy: the CSV's annotations (then the pod template's own)
    // and olm.targetNamespaces on the pod template, one old ReplicaSet kept.
    std::map<std::string, Node> csv_annotations;
    if (const Node* a = op.csv.at_path({"metadata", "annotations"}); a != nullptr && a->is_map())
        for (const auto& e : a->fields)
            csv_annotations[e.key] = e.value;
    if (const Node* deps = install ? install->get("deployments") : nullptr;
        deps != nullptr && deps->is_seq())
        for (const auto& d : deps->items) {
            const std::string name = d.text_at({"name"});
            if (name.empty())
                return Error::invalid("bundle " + text::quote(csv) +
                                      ": a deployment of its install strategy has no name");
            Node dep = object("apps/v1", "Deployment", name, ns);
            if (const Node* label = d.get("label"); label != nullptr && label->is_map())
                dep.get("metadata")->set("labels", *label);
            Node spec =
                d.get("spec") != nullptr && d.get("spec")->is_map() ? *d.get("spec") : Node::map();
            spec.set("revisionHistoryLimit", Node::integer(1));
            Node& meta = ensure_map(ensure_map(spec, "template"), "metadata");
            std::map<std::string, Node> merged = csv_annotations;
            if (const Node* a = meta.get("annotations"); a != nullptr && a->is_map())
                for (const auto& e : a->fields)
                    merged[e.key] = e.value;
            merged["olm.targetNamespaces"] =
                Node::string(all_namespaces ? std::string() : text::join(targets, ","));
            Node& ann = meta.set("annotations", Node::map());
            for (auto& [k, v] : merged)
                ann.set(k, std::move(v));
            dep.set("spec", std::move(spec));
            if (auto it = hooks->cert_secrets.find(name); it != hooks->cert_secrets.end())
                detail::mount_serving_cert(dep, it->second);
            out.push_back({folder, std::move(dep), 4});
        }
    // The webhooks last: registered once what serves them is there.
    for (auto& o : hooks->configurations)
        out.push_back({folder, std::move(o), 5});
    return {};
}

// --- files
// ------------------------------------------------------------------------------------------

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

// Characters a file name keeps; others (':' of system:... names) become '-'.
std::string file_part(std::string s) {
    for (char& c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_'))
            c = '-';
    return s;
}

} // namespace

Result<GitOpsTree> make_tree(const InstallPlan& plan, const TreeOptions& opts) {
    const std::string& ns = plan.namespace_name;
    std::set<std::string> seen_targets;
    for (const auto& t : opts.target_namespaces) {
        if (auto r = check_namespace(t, "--target-namespaces"); !r) return std::move(r).error();
        if (!seen_targets.insert(t).second)
            return Error::usage("--target-namespaces: " + text::quote(t) + " is given twice");
    }
    // Every operator of the namespace shares its OperatorGroup (with OLM) or the target
    // namespaces (without): each must support them.
    for (const auto& op : plan.operators)
        if (auto r = check_install_modes(op.selected.bundle, op.csv, ns, opts.target_namespaces);
            !r)
            return std::move(r).error();
    // A cluster has one definition of a CRD: two bundles cannot both own it.
    std::map<std::string, std::string> crd_owner;
    for (const auto& op : plan.operators)
        for (const auto& o : op.objects) {
            if (o.text_at({"kind"}) != "CustomResourceDefinition") continue;
            const std::string name = o.text_at({"metadata", "name"});
            auto [it, fresh] = crd_owner.emplace(name, op.selected.bundle);
            if (!fresh && it->second != op.selected.bundle)
                return Error::invalid("CustomResourceDefinition " + text::quote(name) +
                                      " is owned by two bundles, " + text::quote(it->second) +
                                      " and " + text::quote(op.selected.bundle) +
                                      ": a cluster has one definition of it; nothing written");
        }

    std::vector<Placed> objs;
    const std::string common = "common";
    objs.push_back({common, object("v1", "Namespace", ns), 0});
    if (opts.format == TreeFormat::olm) {
        std::set<std::string> catalogs;
        for (const auto& op : plan.operators)
            catalogs.insert(op.selected.catalog); // OLM resolves the dependencies there too

        std::map<std::string, std::string> images = opts.catalog_images;
        if (auto unnamed = images.find(""); unnamed != images.end()) {
            // REF alone: the image of the one catalog.
            if (catalogs.size() != 1 || images.size() != 1)
                return Error::usage("--catalog-image " + text::quote(unnamed->second) +
                                    ": the plan's operators come from " +
                                    std::to_string(catalogs.size()) +
                                    " catalogs; give NAME=REF for each");
            images = {{*catalogs.begin(), unnamed->second}};
        }
        std::vector<std::string> missing;
        for (const auto& c : catalogs) {
            auto it = images.find(c);
            if (it == images.end()) {
                missing.push_back(c);
                continue;
            }
            Node cs =
                object("operators.coreos.com/v1alpha1", "CatalogSource", c, plan.catalog_namespace);
            Node& spec = cs.set("spec", Node::map());
            spec.set("sourceType", Node::string("grpc"));
            spec.set("image", Node::string(it->second));
            spec.set("displayName", Node::string(c));
            objs.push_back({common, std::move(cs), 0});
        }
        if (!missing.empty())
            return Error::usage(
                "an olm tree has a CatalogSource for each catalog the plan's operators come "
                "from, and the image of " +
                text::join(missing, ", ") + " is not known: give --catalog-image " +
                (catalogs.size() == 1 ? "REF" : "NAME=REF") + " (the catalog's image)");
        for (const auto& [name, ref] : images)
            if (!catalogs.count(name))
                return Error::usage(
                    "--catalog-image " + text::quote(name + "=" + ref) + ": " + text::quote(name) +
                    " is not a catalog of the plan's " + "operators (" +
                    text::join(std::vector<std::string>(catalogs.begin(), catalogs.end()), ", ") +
                    ")");
        Node og = object("operators.coreos.com/v1", "OperatorGroup", ns, ns);
        Node& spec = og.set("spec", Node::map());
        if (!opts.target_namespaces.empty())
            spec.set("targetNamespaces", strings(opts.target_namespaces));
        objs.push_back({common, std::move(og), 1});
        for (const auto& op : plan.operators) {
            if (op.dependency) continue;
            const auto& s = op.selected;
            Node sub = object("operators.coreos.com/v1alpha1", "Subscription", op.subscription, ns);
            Node& sspec = sub.set("spec", Node::map());
            if (!s.channel.empty()) sspec.set("channel", Node::string(s.channel));
            sspec.set("installPlanApproval", Node::string(approval_name(plan.approval)));
            sspec.set("name", Node::string(s.package));
            sspec.set("source", Node::string(s.catalog));
            sspec.set("sourceNamespace", Node::string(plan.catalog_namespace));
            sspec.set("startingCSV", Node::string(s.bundle));
            objs.push_back({s.package, std::move(sub), 2});
        }
    } else {
        // Sync waves 1-5 for the first operator, 6-10 for the next...: an operator's objects
        // after those of the operators it depends on, as written.
        int base = 0;
        for (const PlannedOperator* op : dependency_order(plan)) {
            const std::size_t first = objs.size();
            if (auto r = manifests_of(*op, ns, opts.target_namespaces, opts.cert_provider, objs);
                !r)
                return std::move(r).error();
            for (std::size_t i = first; i < objs.size(); ++i)
                objs[i].wave += base;
            base += 5;
        }
    }

    GitOpsTree tree;
    std::set<std::string> paths;
    Node kustomization = Node::map();
    kustomization.set("apiVersion", Node::string("kustomize.config.k8s.io/v1beta1"));
    kustomization.set("kind", Node::string("Kustomization"));
    kustomization.set("sortOptions", Node::map()).set("order", Node::string("fifo"));
    Node& resources = kustomization.set("resources", Node::seq());
    for (auto& p : objs) {
        const std::string kind = p.node.text_at({"kind"});
        const std::string name = p.node.text_at({"metadata", "name"});
        const std::string obj_ns = p.node.text_at({"metadata", "namespace"});
        std::string file = lower(kind) + "-";
        if (!obj_ns.empty() && obj_ns != ns) file += file_part(obj_ns) + "-";
        file += file_part(name) + ".yaml";
        const std::string path = p.folder + "/" + file;
        if (!paths.insert(path).second)
            return Error::invalid("two objects of the tree would be written to " + path + " (" +
                                  kind + " " + text::quote(name) +
                                  "): a bundle holds the same object twice?");
        if (opts.sync_waves)
            ensure_map(ensure_map(p.node, "metadata"), "annotations")
                .set(wave_key, Node::string(std::to_string(p.wave)));
        tree.files.push_back({path, io::to_yaml(p.node)});
        resources.push(Node::string(path));
    }
    tree.files.push_back({"kustomization.yaml", io::to_yaml(kustomization)});
    return tree;
}

} // namespace kpkg::plan
