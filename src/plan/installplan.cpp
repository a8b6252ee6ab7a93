// The InstallPlan OLM would create: steps, manifests, RBAC, and its rendering.
#include "kpkg/plan/installplan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/model/names.hpp"
#include "permissions.hpp"

namespace kpkg::plan {

const char* approval_name(Approval a) {
    return a == Approval::manual ? "Manual" : "Automatic";
}

Result<Approval> parse_approval(std::string_view s) {
    if (s == "Automatic") return Approval::automatic;
    if (s == "Manual") return Approval::manual;
    return Error::usage("--approval " + text::quote(s) + ": give Automatic or Manual");
}

Result<void> check_namespace(std::string_view ns, std::string_view flag) {
    auto bad = [&](const std::string& why) {
        return Error::usage(std::string(flag) + " " + text::quote(ns) +
                            " is not a valid namespace name: " + why);
    };
    const model::Dns1123Check c = model::check_dns1123_label(ns);
    if (c.empty) return bad("it is empty");
    if (c.too_long)
        return bad("it has " + std::to_string(ns.size()) +
                   " characters, at most 63 are allowed (a DNS-1123 label)");
    if (c.bad_character)
        return bad("character " + std::to_string(c.first_bad + 1) + " " +
                   text::quote(ns.substr(c.first_bad, 1)) +
                   " is not allowed; a DNS-1123 label has only lower-case letters, digits and "
                   "'-'");
    if (c.bad_edge) return bad("it must start and end with a lower-case letter or a digit");
    return {};
}

bool olm_creates(std::string_view kind) {
    static const std::set<std::string_view> kinds = {
        "ClusterServiceVersion",
        "Subscription",
        "Secret",
        "BundleSecret",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ServiceAccount",
        "Service",
        "ConfigMap",
        "CustomResourceDefinition",
        "PrometheusRule",
        "ServiceMonitor",
        "PodDisruptionBudget",
        "PriorityClass",
        "VerticalPodAutoscaler",
        "ConsoleYAMLSample",
        "ConsoleQuickStart",
        "ConsoleCLIDownload",
        "ConsoleLink",
        "ConsolePlugin",
        "NetworkPolicy",
    };
    return kinds.count(kind) != 0;
}

namespace {

constexpr const char* olm_api_version = "operators.coreos.com/v1alpha1";
constexpr const char* rbac_group = "rbac.authorization.k8s.io";

// --- JSON as Go's encoding/json writes typed values (HTML escaped) ----------------------------

void str(std::string& out, std::string_view s) {
    io::go::append_string(out, s, true);
}

void key(std::string& out, std::string_view k) {
    if (!out.empty() && out.back() != '{' && out.back() != '[') out += ',';
    str(out, k);
    out += ':';
}

void str_field(std::string& out, std::string_view k, std::string_view v) {
    key(out, k);
    str(out, v);
}

void str_list(std::string& out, const std::vector<std::string>& v) {
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += ',';
        str(out, v[i]);
    }
    out += ']';
}

// The re-encoding of compact JSON held by the catalog (HTML characters as they are) as
// json.Marshal writes a json.RawMessage: '<', '>' and '&' can only be inside strings.
void raw_html_escaped(std::string& out, std::string_view json) {
    for (char c : json) {
        if (c == '<')
            out += "\\u003c";
        else if (c == '>')
            out += "\\u003e";
        else if (c == '&')
            out += "\\u0026";
        else
            out += c;
    }
}

std::pair<std::string, std::string> split_api_version(std::string_view api_version) {
    const auto slash = api_version.find('/');
    if (slash == std::string_view::npos) return {"", std::string(api_version)};
    return {std::string(api_version.substr(0, slash)), std::string(api_version.substr(slash + 1))};
}

void remove_field(io::Node& map, std::string_view k) {
    auto& f = map.fields;
    f.erase(std::remove_if(f.begin(), f.end(), [&](const io::MapEntry& e) { return e.key == k; }),
            f.end());
}

io::Node& ensure_map(io::Node& parent, const std::string& k) {
    io::Node* n = parent.get(k);
    if (n == nullptr || !n->is_map()) return parent.set(k, io::Node::map());
    return *n;
}

} // namespace

namespace detail {

static std::vector<std::string> strings_of(const io::Node* n) {
    std::vector<std::string> out;
    if (n == nullptr || !n->is_seq()) return out;
    for (const auto& i : n->items)
        out.push_back(i.text);
    return out;
}

std::vector<Permission> permissions_of(const io::Node* list) {
    std::vector<Permission> out;
    if (list == nullptr || !list->is_seq()) return out;
    for (const auto& p : list->items) {
        Permission perm;
        perm.service_account = p.text_at({"serviceAccountName"});
        if (const io::Node* rules = p.get("rules"); rules != nullptr && rules->is_seq()) {
            perm.has_rules = true;
            for (const auto& r : rules->items) {
                Rule rule;
                const io::Node* verbs = r.get("verbs");
                rule.has_verbs = verbs != nullptr && verbs->is_seq();
                rule.verbs = strings_of(verbs);
                rule.api_groups = strings_of(r.get("apiGroups"));
                rule.resources = strings_of(r.get("resources"));
                rule.resource_names = strings_of(r.get("resourceNames"));
                rule.non_resource_urls = strings_of(r.get("nonResourceURLs"));
                perm.rules.push_back(std::move(rule));
            }
        }
        out.push_back(std::move(perm));
    }
    return out;
}

// rbacv1.PolicyRule: verbs always, the others when not empty.
static void rule_json(std::string& out, const Rule& r) {
    out += '{';
    key(out, "verbs");
    if (r.has_verbs)
        str_list(out, r.verbs);
    else
        out += "null";
    auto opt = [&](const char* k, const std::vector<std::string>& v) {
        if (v.empty()) return;
        key(out, k);
        str_list(out, v);
    };
    opt("apiGroups", r.api_groups);
    opt("resources", r.resources);
    opt("resourceNames", r.resource_names);
    opt("nonResourceURLs", r.non_resource_urls);
    out += '}';
}

io::Node rule_node(const Rule& r) {
    io::Node n = io::Node::map();
    auto list = [&](const char* k, const std::vector<std::string>& v, bool always) {
        if (v.empty() && !always) return;
        io::Node& l = n.set(k, io::Node::seq());
        for (const auto& x : v)
            l.push(io::Node::string(x));
    };
    list("verbs", r.verbs, true);
    list("apiGroups", r.api_groups, false);
    list("resources", r.resources, false);
    list("resourceNames", r.resource_names, false);
    list("nonResourceURLs", r.non_resource_urls, false);
    return n;
}

std::string rules_json(const Permission& p) {
    if (!p.has_rules) return "null";
    std::string out = "[";
    for (std::size_t i = 0; i < p.rules.size(); ++i) {
        if (i) out += ',';
        rule_json(out, p.rules[i]);
    }
    out += ']';
    return out;
}

} // namespace detail

using detail::Permission;
using detail::permissions_of;
using detail::Rule;
using detail::rules_json;

namespace {

// The name hash of a Role (namespace empty) or ClusterRole: json.Encoder output of
// {name, namespace?, permission{serviceAccountName, rules}}.
std::string name_hash(const std::string& csv, const std::string* ns, const Permission& p) {
    std::string out = "{";
    str_field(out, "name", csv);
    if (ns != nullptr) str_field(out, "namespace", *ns);
    key(out, "permission");
    out += '{';
    str_field(out, "serviceAccountName", p.service_account);
    key(out, "rules");
    out += rules_json(p);
    out += "}}\n";
    return base62_sha224(out);
}

struct Owner {
    std::string csv, ns, api_version;
};

void owner_refs(std::string& out, const Owner& o) {
    key(out, "ownerReferences");
    out += "[{";
    str_field(out, "apiVersion", o.api_version);
    str_field(out, "kind", "ClusterServiceVersion");
    str_field(out, "name", o.csv);
    str_field(out, "uid", "");
    key(out, "controller");
    out += "false";
    key(out, "blockOwnerDeletion");
    out += "false";
    out += "}]";
}

void owner_labels(std::string& out, const Owner& o, const std::string& hash) {
    key(out, "labels");
    out += '{';
    str_field(out, "olm.owner", o.csv);
    str_field(out, "olm.owner.kind", "ClusterServiceVersion");
    str_field(out, "olm.owner.namespace", o.ns);
    str_field(out, "olm.permissions.hash", hash);
    out += '}';
}

void subjects_json(std::string& out, const std::string& sa, const std::string& ns) {
    out += "[{";
    str_field(out, "kind", "ServiceAccount");
    str_field(out, "name", sa);
    str_field(out, "namespace", ns);
    out += "}]";
}

void role_ref_json(std::string& out, const char* kind, const std::string& name) {
    out += '{';
    str_field(out, "apiGroup", rbac_group);
    str_field(out, "kind", kind);
    str_field(out, "name", name);
    out += '}';
}

// olm.permissions.hash of a binding: json.Marshal of struct{RoleRef; Subjects}.
std::string binding_hash(const char* kind, const std::string& name, const std::string& sa,
                         const std::string& ns) {
    std::string out = "{";
    key(out, "RoleRef");
    role_ref_json(out, kind, name);
    key(out, "Subjects");
    subjects_json(out, sa, ns);
    out += '}';
    return base62_sha224(out);
}

struct RbacObject {
    std::string group, version, kind, name, manifest;
};

struct AccountRbac {
    std::string sa_manifest; // "" when no ServiceAccount step (named "default")
    std::vector<RbacObject> roles, role_bindings, cluster_roles, cluster_role_bindings;
};

std::string binding_manifest(const char* role_kind, const std::string& name, const std::string& sa,
                             const Owner& o, bool namespaced_owner) {
    const std::string hash = binding_hash(role_kind, name, sa, o.ns);
    std::string m = "{";
    key(m, "metadata");
    m += '{';
    str_field(m, "name", name);
    str_field(m, "namespace", o.ns);
    owner_labels(m, o, hash);
    if (namespaced_owner) owner_refs(m, o);
    m += '}';
    key(m, "subjects");
    subjects_json(m, sa, o.ns);
    key(m, "roleRef");
    role_ref_json(m, role_kind, name);
    m += "}\n";
    return m;
}

// The RBAC steps of the CSV per service account, as OLM's RBACForClusterServiceVersion makes
// them, the accounts by name.
std::map<std::string, AccountRbac> rbac_for(const Owner& o, const std::vector<Permission>& perms,
                                            const std::vector<Permission>& cluster_perms) {
    std::map<std::string, AccountRbac> out;
    auto account = [&](const std::string& sa, bool namespaced) -> AccountRbac& {
        auto [it, fresh] = out.try_emplace(sa);
        if (fresh && sa != "default") {
            std::string m = "{";
            key(m, "metadata");
            m += '{';
            str_field(m, "name", sa);
            if (namespaced) str_field(m, "namespace", o.ns);
            owner_refs(m, o);
            m += "}}\n";
            it->second.sa_manifest = std::move(m);
        }
        return it->second;
    };
    for (const auto& p : perms) {
        AccountRbac& acc = account(p.service_account, true);
        const std::string name =
            rbac_name(o.csv + "-" + p.service_account, name_hash(o.csv, nullptr, p));
        const std::string rules = rules_json(p);
        std::string m = "{";
        key(m, "metadata");
        m += '{';
        str_field(m, "name", name);
        str_field(m, "namespace", o.ns);
        owner_labels(m, o, base62_sha224(rules));
        owner_refs(m, o);
        m += '}';
        key(m, "rules");
        m += rules;
        m += "}\n";
        acc.roles.push_back({rbac_group, "v1", "Role", name, std::move(m)});
        acc.role_bindings.push_back({rbac_group, "v1", "RoleBinding", name,
                                     binding_manifest("Role", name, p.service_account, o, true)});
    }
    for (const auto& p : cluster_perms) {
        AccountRbac& acc = account(p.service_account, false);
        const std::string name = rbac_name(o.csv, name_hash(o.csv, &o.ns, p));
        const std::string rules = rules_json(p);
        std::string m = "{";
        key(m, "metadata");
        m += '{';
        str_field(m, "name", name);
        owner_labels(m, o, base62_sha224(rules));
        m += '}';
        key(m, "rules");
        m += rules;
        m += "}\n";
        acc.cluster_roles.push_back({rbac_group, "v1", "ClusterRole", name, std::move(m)});
        acc.cluster_role_bindings.push_back(
            {rbac_group, "v1", "ClusterRoleBinding", name,
             binding_manifest("ClusterRole", name, p.service_account, o, false)});
    }
    return out;
}

// --- bundle objects ----------------------------------------------------------------------------

// A file name as OLM's unpacker keys it: characters outside [-A-Za-z0-9_.] become '-'.
std::string config_map_key(std::string_view file) {
    std::string out(
        file.substr(file.rfind('/') == std::string_view::npos ? 0 : file.rfind('/') + 1));
    for (char& c : out)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            c = '-';
    return out;
}

std::string marshal(const io::Node& n) {
    std::string out;
    io::go::append_marshal(out, n, true);
    out += '\n';
    return out;
}

std::string entry_replaces(const std::vector<resolve::CatalogSource>& catalogs,
                           const resolve::Selected& s) {
    for (const auto& c : catalogs) {
        if (c.name != s.catalog) continue;
        const model::Catalog& cat = *c.catalog;
        const auto* info = cat.package_info(s.package);
        if (info == nullptr) return {};
        for (std::uint32_t ci : info->channels) {
            const model::Channel& ch = cat.channels[ci];
            if (cat.str(ch.name) != s.channel) continue;
            for (const auto& e : cat.entries_of(ch))
                if (cat.str(e.name) == s.bundle) return cat.string(e.replaces);
        }
    }
    return {};
}

// {"properties":[{"type":T,"value":V},...]} of the bundle's catalog properties but
// olm.bundle.object, as OLM's projection writes it.
Result<std::string> properties_annotation(const std::vector<resolve::CatalogSource>& catalogs,
                                          const resolve::Selected& s) {
    for (const auto& c : catalogs) {
        if (c.name != s.catalog) continue;
        const model::Catalog& cat = *c.catalog;
        auto pkg = cat.strings.find(s.package);
        auto name = cat.strings.find(s.bundle);
        const std::uint32_t bi =
            pkg && name ? cat.find_bundle(*pkg, *name) : static_cast<std::uint32_t>(model::npos32);
        if (bi == model::npos32) break;
        std::string props;
        for (const auto& p : cat.properties_of(cat.bundles[bi])) {
            if (p.kind == model::PropKind::bundle_object) continue;
            if (p.json == 0)
                return Error::internal("the catalog was loaded without property values");
            props += props.empty() ? "" : ",";
            props += '{';
            key(props, "type");
            str(props, cat.str(p.type));
            key(props, "value");
            raw_html_escaped(props, cat.str(p.json));
            props += '}';
        }
        if (props.empty()) return std::string("{}");
        return "{\"properties\":[" + props + "]}";
    }
    return Error::internal("bundle " + s.bundle + " is not in catalog " + s.catalog);
}

std::string subscription_manifest(const std::string& name, const std::string& ns,
                                  const resolve::Selected& s, const std::string& catalog_ns) {
    std::string m = "{";
    key(m, "metadata");
    m += '{';
    str_field(m, "name", name);
    str_field(m, "namespace", ns);
    m += '}';
    key(m, "spec");
    m += '{';
    str_field(m, "source", s.catalog);
    str_field(m, "sourceNamespace", catalog_ns);
    str_field(m, "name", s.package);
    if (!s.channel.empty()) str_field(m, "channel", s.channel);
    str_field(m, "startingCSV", s.bundle);
    str_field(m, "installPlanApproval", "Automatic");
    key(m, "config");
    m += "{\"resources\":{}}";
    m += '}';
    key(m, "status");
    m += "{\"lastUpdated\":null}";
    m += "}\n";
    return m;
}

} // namespace

Result<InstallPlan> make_install_plan(const std::vector<resolve::CatalogSource>& catalogs,
                                      const resolve::Request& request,
                                      const resolve::Resolution& resolution,
                                      const std::map<std::string, BundleContents>& contents,
                                      const PlanOptions& opts) {
    if (!resolution.satisfiable)
        return Error::internal("an InstallPlan is made of a satisfiable resolution");
    InstallPlan plan;
    plan.namespace_name = opts.namespace_name;
    plan.approval = opts.approval;
    plan.catalog_namespace = opts.catalog_namespace;
    const std::string& ns = opts.namespace_name;

    // The Subscriptions the plan covers: the requests, and with --upgrade every installed
    // operator; each is named after its package.
    std::set<std::string> covered;
    for (const auto& s : request.subscriptions)
        covered.insert(s.package);
    if (request.options.upgrade)
        for (const auto& i : request.installed)
            covered.insert(i.package);
    plan.subscriptions.assign(covered.begin(), covered.end());
    plan.unchanged = resolution.unchanged;

    for (const auto& s : resolution.selected) {
        PlannedOperator op;
        op.selected = s;
        op.dependency = !covered.count(s.package);
        op.subscription = op.dependency ? s.package + "-" + s.channel + "-" + s.catalog + "-" +
                                              opts.catalog_namespace
                                        : s.package;
        auto it = contents.find(s.bundle);
        if (it == contents.end())
            return Error::internal("no contents for bundle " + text::quote(s.bundle));
        op.source = it->second.source;
        op.origin = it->second.origin;
        plan.operators.push_back(std::move(op));
    }

    std::set<std::string> sources;
    auto add_step = [&](const std::string& resolving, const std::string& catalog, std::string group,
                        std::string version, std::string kind, std::string name,
                        std::string manifest) {
        Step st;
        st.resolving = resolving;
        st.source_name = catalog;
        st.source_namespace = opts.catalog_namespace;
        st.group = std::move(group);
        st.version = std::move(version);
        st.kind = std::move(kind);
        st.name = std::move(name);
        st.manifest = std::move(manifest);
        sources.insert(catalog);
        plan.steps.push_back(std::move(st));
    };

    for (const auto& op : plan.operators)
        if (op.dependency)
            add_step(
                op.selected.bundle, op.selected.catalog, "operators.coreos.com", "v1alpha1",
                "Subscription", op.subscription,
                subscription_manifest(op.subscription, ns, op.selected, opts.catalog_namespace));

    std::vector<std::string> refused; // objects OLM does not create
    for (auto& op : plan.operators) {
        const resolve::Selected& s = op.selected;
        const BundleContents& c = contents.at(s.bundle);
        const std::string bundle_q = "bundle " + text::quote(s.bundle);
        // The CSV: the first one (OLM uses no other).
        const BundleObject* csv = nullptr;
        std::vector<const BundleObject*> others;
        std::set<std::string> files_seen;
        for (const auto& o : c.objects) {
            const std::string kind = o.object.text_at({"kind"});
            if (kind == "ClusterServiceVersion") {
                if (csv == nullptr) csv = &o;
                continue;
            }
            // Only the first document of a file becomes an object, as opm and OLM read bundles.
            if (c.source != ContentSource::catalog && !files_seen.insert(o.file).second) {
                plan.warnings.push_back(bundle_q + ": " + o.file + ": document " +
                                        std::to_string(o.document + 1) +
                                        " left out: OLM reads only the first document of a file");
                continue;
            }
            others.push_back(&o);
        }
        if (csv == nullptr)
            return Error::invalid(bundle_q + " (" + content_source_name(c.source) + " " + c.origin +
                                  ") has no ClusterServiceVersion");
        const std::string csv_name = csv->object.text_at({"metadata", "name"});
        if (csv_name != s.bundle)
            return Error::invalid(bundle_q + ": its ClusterServiceVersion (" + csv->file +
                                  ") is named " + text::quote(csv_name));
        if (c.source != ContentSource::catalog)
            std::stable_sort(others.begin(), others.end(),
                             [](const BundleObject* a, const BundleObject* b) {
                                 return config_map_key(a->file) < config_map_key(b->file);
                             });
        for (const BundleObject* o : others) {
            const std::string kind = o->object.text_at({"kind"});
            const std::string name = o->object.text_at({"metadata", "name"});
            const std::string api = o->object.text_at({"apiVersion"});
            if (kind.empty() ||
                (name.empty() && o->object.text_at({"metadata", "generateName"}).empty()))
                refused.push_back(bundle_q + ": " + o->file + ": an object without " +
                                  (kind.empty() ? "kind" : "metadata.name"));
            else if (!olm_creates(kind))
                refused.push_back(bundle_q + ": " + o->file + ": " + kind + " " +
                                  text::quote(name) + " (" + api + ") is not a kind OLM creates");
        }

        op.csv = csv->object;
        for (const BundleObject* o : others)
            op.objects.push_back(o->object);
        // The CSV step.
        io::Node obj = csv->object;
        std::string api_version = obj.text_at({"apiVersion"});
        if (api_version.empty()) {
            api_version = olm_api_version;
            obj.set("apiVersion", io::Node::string(api_version));
        }
        io::Node& meta = ensure_map(obj, "metadata");
        meta.set("namespace", io::Node::string(ns));
        auto props = properties_annotation(catalogs, s);
        if (!props) return std::move(props).error();
        ensure_map(meta, "annotations")
            .set("operatorframework.io/properties", io::Node::string(*props));
        const std::string replaces = s.replaces.empty() ? entry_replaces(catalogs, s) : s.replaces;
        io::Node& spec = ensure_map(obj, "spec");
        if (replaces.empty())
            remove_field(spec, "replaces");
        else
            spec.set("replaces", io::Node::string(replaces));
        const std::string strategy = obj.text_at({"spec", "install", "strategy"});
        if (strategy != "deployment")
            return Error::invalid(
                bundle_q + ": " + csv->file + ": " +
                (strategy.empty() ? std::string("the CSV has no install strategy "
                                                "(spec.install.strategy)")
                                  : "install strategy " + text::quote(strategy)) +
                "; OLM installs only the \"deployment\" strategy and fails the plan");
        op.first_step = plan.steps.size();
        plan.csv_names.push_back(s.bundle);
        {
            auto [g, v] = split_api_version(api_version);
            add_step(s.bundle, s.catalog, g, v, "ClusterServiceVersion", s.bundle, marshal(obj));
        }
        for (const BundleObject* o : others) {
            std::string kind = o->object.text_at({"kind"});
            if (kind == "Secret") kind = "BundleSecret";
            std::string name = o->object.text_at({"metadata", "name"});
            if (name.empty()) name = o->object.text_at({"metadata", "generateName"});
            auto [g, v] = split_api_version(o->object.text_at({"apiVersion"}));
            add_step(s.bundle, s.catalog, g, v, kind, name, marshal(o->object));
        }
        const Owner owner{s.bundle, ns, api_version};
        const io::Node* install = obj.at_path({"spec", "install", "spec"});
        auto rbac =
            rbac_for(owner, permissions_of(install ? install->get("permissions") : nullptr),
                     permissions_of(install ? install->get("clusterPermissions") : nullptr));
        for (auto& [sa, acc] : rbac) {
            if (!acc.sa_manifest.empty())
                add_step(s.bundle, s.catalog, "", "v1", "ServiceAccount", sa,
                         std::move(acc.sa_manifest));
            for (auto* list :
                 {&acc.roles, &acc.role_bindings, &acc.cluster_roles, &acc.cluster_role_bindings})
                for (auto& r : *list)
                    add_step(s.bundle, s.catalog, r.group, r.version, r.kind, r.name,
                             std::move(r.manifest));
        }
        op.step_count = plan.steps.size() - op.first_step;
    }
    if (!refused.empty()) {
        std::string msg = "the InstallPlan would fail: " + std::to_string(refused.size()) +
                          (refused.size() == 1 ? " object is" : " objects are") +
                          " of a kind OLM does not create:";
        for (const auto& r : refused)
            msg += "\n  " + r;
        return Error::invalid(msg);
    }
    plan.catalog_sources.assign(sources.begin(), sources.end());
    return plan;
}

// --- rendering -----------------------------------------------------------------------------------

io::Node install_plan_node(const InstallPlan& plan) {
    using io::Node;
    Node root = Node::map();
    root.set("apiVersion", Node::string(olm_api_version));
    root.set("kind", Node::string("InstallPlan"));
    Node& meta = root.set("metadata", Node::map());
    meta.set("generateName", Node::string("install-"));
    meta.set("namespace", Node::string(plan.namespace_name));
    if (!plan.subscriptions.empty()) {
        Node& refs = meta.set("ownerReferences", Node::seq());
        for (const auto& sub : plan.subscriptions) {
            Node r = Node::map();
            r.set("apiVersion", Node::string(olm_api_version));
            r.set("kind", Node::string("Subscription"));
            r.set("name", Node::string(sub));
            r.set("uid", Node::string(""));
            r.set("controller", Node::boolean(false));
            r.set("blockOwnerDeletion", Node::boolean(false));
            refs.push(std::move(r));
        }
    }
    Node& spec = root.set("spec", Node::map());
    Node& names = spec.set("clusterServiceVersionNames", Node::seq());
    for (const auto& n : plan.csv_names)
        names.push(Node::string(n));
    spec.set("approval", Node::string(approval_name(plan.approval)));
    spec.set("approved", Node::boolean(plan.approval == Approval::automatic));
    spec.set("generation", Node::integer(1));
    Node& status = root.set("status", Node::map());
    status.set("phase", Node::string(plan.approval == Approval::automatic ? "Installing"
                                                                          : "RequiresApproval"));
    Node& sources = status.set("catalogSources", Node::seq());
    for (const auto& s : plan.catalog_sources)
        sources.push(Node::string(s));
    if (!plan.steps.empty()) {
        Node& steps = status.set("plan", Node::seq());
        for (const auto& st : plan.steps) {
            Node n = Node::map();
            n.set("resolving", Node::string(st.resolving));
            Node& r = n.set("resource", Node::map());
            r.set("sourceName", Node::string(st.source_name));
            r.set("sourceNamespace", Node::string(st.source_namespace));
            r.set("group", Node::string(st.group));
            r.set("version", Node::string(st.version));
            r.set("kind", Node::string(st.kind));
            r.set("name", Node::string(st.name));
            r.set("manifest", Node::string(st.manifest));
            n.set("status", Node::string(st.status));
            steps.push(std::move(n));
        }
    }
    return root;
}

std::string install_plan_text(const InstallPlan& plan) {
    std::string out = "InstallPlan for namespace " + plan.namespace_name + " (approval " +
                      approval_name(plan.approval) + ", catalogs in namespace " +
                      plan.catalog_namespace + "): " + std::to_string(plan.operators.size()) +
                      (plan.operators.size() == 1 ? " operator, " : " operators, ") +
                      std::to_string(plan.steps.size()) +
                      (plan.steps.size() == 1 ? " step\n\n" : " steps\n\n");
    std::vector<std::vector<std::string>> rows{
        {"PACKAGE", "BUNDLE", "VERSION", "CHANNEL", "CATALOG", "STEPS", "WHY", "CONTENTS"}};
    for (const auto& op : plan.operators) {
        const auto& s = op.selected;
        std::string why = s.reason;
        if (!s.replaces.empty() && why.find(s.replaces) == std::string::npos)
            why += " (replaces " + s.replaces + ")";
        if (op.dependency) why += "; Subscription " + op.subscription + " created";
        rows.push_back({s.package, s.bundle, s.version, s.channel, s.catalog,
                        std::to_string(op.step_count + (op.dependency ? 1 : 0)), why,
                        std::string(content_source_name(op.source)) + " " + op.origin});
    }
    out += text::table(rows);
    if (!plan.unchanged.empty()) out += "\nUnchanged: " + text::join(plan.unchanged, ", ") + "\n";
    std::map<std::string, std::size_t> kinds;
    for (const auto& st : plan.steps)
        ++kinds[st.kind];
    out += "\nSteps by kind:\n";
    std::vector<std::vector<std::string>> krows;
    for (const auto& [k, n] : kinds)
        krows.push_back({"  " + k, std::to_string(n)});
    out += text::table(krows);
    if (!plan.warnings.empty()) {
        out += "\nWarnings:\n";
        for (const auto& w : plan.warnings)
            out += "  " + w + "\n";
    }
    return out;
}

} // namespace kpkg::plan
