// Webhooks of a CSV without OLM: OLM v1's checks, the webhook configurations, Services, CRD
// conversion and the objects of the certificate provider.
#include "webhooks.hpp"

#include <algorithm>
#include <set>

#include "kpkg/core/text.hpp"
#include "kpkg/plan/installplan.hpp"

namespace kpkg::plan {

Result<CertProvider> parse_cert_provider(std::string_view s) {
    if (s == "cert-manager") return CertProvider::cert_manager;
    if (s == "openshift-service-ca") return CertProvider::openshift_service_ca;
    return Error::usage("--cert-provider " + text::quote(s) +
                        ": give cert-manager or openshift-service-ca");
}

namespace detail {

namespace {

using io::Node;

constexpr const char* cert_mount_path = "/tmp/k8s-webhook-server/serving-certs";
constexpr const char* cert_volume = "webhook-cert";

std::string text_of(const Node& n, std::string_view key) {
    const Node* v = n.get(key);
    return v != nullptr && v->is_scalar() && !v->is_null() ? v->text : std::string();
}

std::vector<std::string> strings_of(const Node* n) {
    std::vector<std::string> out;
    if (n != nullptr && n->is_seq())
        for (const auto& i : n->items)
            out.push_back(i.text);
    return out;
}

// base + "-" + suffix, the base cut so that the name fits 63 characters (OLM's object names).
std::string suffixed(std::string base, const std::string& suffix) {
    if (base.size() + suffix.size() > 63) base = base.substr(0, 63 - suffix.size() - 1);
    return base + "-" + suffix;
}

// The Service and certificate names OLM gives the webhooks of a deployment.
std::string service_name(std::string deployment) {
    std::replace(deployment.begin(), deployment.end(), '.', '-');
    return suffixed(deployment, "service");
}

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

void annotate(Node& obj, const std::string& key, const std::string& value) {
    Node* meta = obj.get("metadata");
    Node* ann = meta->get("annotations");
    if (ann == nullptr || !ann->is_map()) ann = &meta->set("annotations", Node::map());
    ann->set(key, Node::string(value));
}

std::int64_t container_port(const Node& wh) {
    const Node* p = wh.get("containerPort");
    const auto v = p != nullptr ? p->as_int() : std::nullopt;
    return v && *v > 0 ? *v : 443;
}

Node service_ref(const std::string& ns, const std::string& name, const Node* path,
                 std::int64_t port) {
    Node s = Node::map();
    s.set("namespace", Node::string(ns));
    s.set("name", Node::string(name));
    if (path != nullptr && !path->is_null()) s.set("path", *path);
    s.set("port", Node::integer(port));
    return s;
}

} // namespace

Result<WebhookObjects> webhook_objects(const std::string& bundle, const Node& csv,
                                       const std::vector<Node>& crds, const std::string& ns,
                                       const std::vector<std::string>& targets,
                                       CertProvider provider) {
    WebhookObjects out;
    const Node* spec = csv.get("spec");
    const Node* hooks = spec != nullptr ? spec->get("webhookdefinitions") : nullptr;
    if (hooks == nullptr || !hooks->is_seq() || hooks->items.empty()) return out;
    const std::string bq = "bundle " + text::quote(bundle) + ": ";

    // The deployments of the install strategy, in order, with their pod selectors.
    std::vector<std::pair<std::string, Node>> deployments;
    if (const Node* install = spec->get("install"); install != nullptr)
        if (const Node* is = install->get("spec"); is != nullptr)
            if (const Node* deps = is->get("deployments"); deps != nullptr && deps->is_seq())
                for (const auto& d : deps->items) {
                    Node selector = Node::map();
                    if (const Node* ds = d.get("spec"); ds != nullptr)
                        if (const Node* sel = ds->get("selector"); sel != nullptr)
                            if (const Node* ml = sel->get("matchLabels"); ml != nullptr)
                                selector = *ml;
                    deployments.emplace_back(text_of(d, "name"), std::move(selector));
                }
    std::set<std::string> modes, owned;
    if (const Node* im = spec->get("installModes"); im != nullptr && im->is_seq())
        for (const auto& m : im->items)
            if (const Node* s = m.get("supported"); s != nullptr && s->as_bool().value_or(false))
                modes.insert(text_of(m, "type"));
    if (const Node* c = spec->get("customresourcedefinitions"); c != nullptr)
        if (const Node* o = c->get("owned"); o != nullptr && o->is_seq())
            for (const auto& e : o->items)
                owned.insert(text_of(e, "name"));

    // OLM v1's checks.
    std::vector<std::string> problems;
    std::set<std::pair<std::string, std::string>> seen;
    std::map<std::string, std::string> conversion_of; // CRD -> webhook
    static const std::set<std::string> forbidden_resources = {
        "*", "mutatingwebhookconfiguration", "mutatingwebhookconfigurations",
        "validatingwebhookconfiguration", "validatingwebhookconfigurations"};
    for (const auto& wh : hooks->items) {
        const std::string type = text_of(wh, "type"), name = text_of(wh, "generateName");
        const std::string dep = text_of(wh, "deploymentName");
        const std::string what = type + " " + text::quote(name);
        if (type != "ValidatingAdmissionWebhook" && type != "MutatingAdmissionWebhook" &&
            type != "ConversionWebhook")
            problems.push_back("webhook " + text::quote(name) + " has type " + text::quote(type) +
                               " (ValidatingAdmissionWebhook, MutatingAdmissionWebhook or "
                               "ConversionWebhook)");
        if (!seen.insert({type, name}).second)
            problems.push_back("two webhooks " + what + " (names are unique per type)");
        if (std::none_of(deployments.begin(), deployments.end(),
                         [&](const auto& d) { return d.first == dep; }))
            problems.push_back("webhook " + what + " names deployment " + text::quote(dep) +
                               ", which the install strategy does not have");
        if (type == "ConversionWebhook") {
            if (modes != std::set<std::string>{"AllNamespaces"})
                problems.push_back("conversion webhook " + text::quote(name) +
                                   ": conversion webhooks need a bundle that supports only the "
                                   "AllNamespaces install mode");
            for (const auto& crd : strings_of(wh.get("conversionCRDs"))) {
                if (!owned.count(crd))
                    problems.push_back("conversion webhook " + text::quote(name) + " names CRD " +
                                       text::quote(crd) + ", which the bundle does not own");
                auto [it, fresh] = conversion_of.emplace(crd, name);
                if (!fresh)
                    problems.push_back("CRD " + text::quote(crd) +
                                       " is named by two conversion webhooks, " +
                                       text::quote(it->second) + " and " + text::quote(name));
            }
            continue;
        }
        if (const Node* rules = wh.get("rules"); rules != nullptr && rules->is_seq())
            for (const auto& r : rules->items)
                for (const auto& g : strings_of(r.get("apiGroups"))) {
                    if (g == "*" || g == "olm.operatorframework.io")
                        problems.push_back("webhook " + what + " has a rule on API group " +
                                           text::quote(g) + ", which OLM forbids");
                    if (g == "admissionregistration.k8s.io")
                        for (const auto& res : strings_of(r.get("resources")))
                            if (forbidden_resources.count(lower(res)))
                                problems.push_back("webhook " + what + " has a rule on " +
                                                   text::quote(res) + " of " + g +
                                                   ", which OLM forbids");
                }
    }
    for (const auto& crd : crds) {
        const Node* meta = crd.get("metadata");
        const std::string name = meta != nullptr ? text_of(*meta, "name") : std::string();
        const Node* cs = crd.get("spec");
        const Node* pu = cs != nullptr ? cs->get("preserveUnknownFields") : nullptr;
        if (conversion_of.count(name) && pu != nullptr && pu->as_bool().value_or(false))
            problems.push_back("CRD " + text::quote(name) +
                               " has spec.preserveUnknownFields true: the API server would not "
                               "call its conversion webhook");
    }
    if (!problems.empty()) {
        std::string msg = bq + "OLM v1 refuses its webhooks:";
        for (const auto& p : problems)
            msg += "\n  " + p;
        return Error::invalid(msg);
    }

    auto inject = [&](Node& obj, const std::string& cert) {
        if (provider == CertProvider::cert_manager)
            annotate(obj, "cert-manager.io/inject-ca-from", ns + "/" + cert);
        else
            annotate(obj, "service.beta.openshift.io/inject-cabundle", "true");
    };
    std::map<std::string, std::set<std::pair<std::int64_t, std::string>>> ports; // by deployment
    std::map<std::string, Node> target_ports;
    for (const auto& wh : hooks->items) {
        const std::string type = text_of(wh, "type"), dep = text_of(wh, "deploymentName");
        const std::string svc = service_name(dep), cert = suffixed(svc, "cert");
        const std::int64_t port = container_port(wh);
        Node target = Node::integer(port);
        if (const Node* tp = wh.get("targetPort"); tp != nullptr && !tp->is_null()) target = *tp;
        const std::string key = std::to_string(port) + "/" + target.text;
        if (ports[dep].insert({port, key}).second) target_ports[dep + "\n" + key] = target;
        out.cert_secrets[dep] = cert;
        if (type == "ConversionWebhook") {
            Node conv = Node::map();
            conv.set("strategy", Node::string("Webhook"));
            Node& w = conv.set("webhook", Node::map());
            Node path = Node::string("/");
            if (const Node* p = wh.get("webhookPath"); p != nullptr && !p->is_null()) path = *p;
            w.set("clientConfig", Node::map()).set("service", service_ref(ns, svc, &path, port));
            Node versions = Node::seq();
            for (const auto& v : strings_of(wh.get("admissionReviewVersions")))
                versions.push(Node::string(v));
            w.set("conversionReviewVersions", std::move(versions));
            for (const auto& crd : strings_of(wh.get("conversionCRDs"))) {
                out.conversions[crd] = conv;
                out.crd_annotations[crd] =
                    provider == CertProvider::cert_manager
                        ? std::vector<std::pair<std::string, std::string>>{{"cert-manager.io/"
                                                                            "inject-ca-from",
                                                                            ns + "/" + cert}}
                        : std::vector<std::pair<std::string, std::string>>{
                              {"service.beta.openshift.io/inject-cabundle", "true"}};
            }
            continue;
        }
        const bool validating = type == "ValidatingAdmissionWebhook";
        std::string name = text_of(wh, "generateName");
        if (!name.empty() && name.back() == '-') name.pop_back();
        Node cfg = Node::map();
        cfg.set("apiVersion", Node::string("admissionregistration.k8s.io/v1"));
        cfg.set("kind", Node::string(validating ? "ValidatingWebhookConfiguration"
                                                : "MutatingWebhookConfiguration"));
        cfg.set("metadata", Node::map()).set("name", Node::string(name));
        Node hook = Node::map();
        hook.set("name", Node::string(name));
        hook.set("clientConfig", Node::map())
            .set("service", service_ref(ns, svc, wh.get("webhookPath"), port));
        for (const char* k : {"rules", "failurePolicy", "matchPolicy"})
            if (const Node* v = wh.get(k); v != nullptr && !v->is_null()) hook.set(k, *v);
        if (!targets.empty()) {
            Node expr = Node::map();
            expr.set("key", Node::string("kubernetes.io/metadata.name"));
            expr.set("operator", Node::string("In"));
            Node values = Node::seq();
            for (const auto& t : targets)
                values.push(Node::string(t));
            expr.set("values", std::move(values));
            hook.set("namespaceSelector", Node::map())
                .set("matchExpressions", Node::seq())
                .push(std::move(expr));
        }
        for (const char* k :
             {"objectSelector", "sideEffects", "timeoutSeconds", "admissionReviewVersions"})
            if (const Node* v = wh.get(k); v != nullptr && !v->is_null()) hook.set(k, *v);
        if (!validating)
            if (const Node* v = wh.get("reinvocationPolicy"); v != nullptr && !v->is_null())
                hook.set("reinvocationPolicy", *v);
        cfg.set("webhooks", Node::seq()).push(std::move(hook));
        inject(cfg, cert);
        out.configurations.push_back(std::move(cfg));
    }

    // A Service per deployment serving webhooks (in install strategy order), ports by number.
    for (const auto& [dep, selector] : deployments) {
        auto it = ports.find(dep);
        if (it == ports.end()) continue;
        const std::string svc = service_name(dep), cert = suffixed(svc, "cert");
        Node s = Node::map();
        s.set("apiVersion", Node::string("v1"));
        s.set("kind", Node::string("Service"));
        Node& meta = s.set("metadata", Node::map());
        meta.set("name", Node::string(svc));
        meta.set("namespace", Node::string(ns));
        Node& sspec = s.set("spec", Node::map());
        Node& pl = sspec.set("ports", Node::seq());
        for (const auto& [port, key] : it->second) {
            Node p = Node::map();
            p.set("name", Node::string(std::to_string(port)));
            p.set("port", Node::integer(port));
            p.set("targetPort", target_ports[dep + "\n" + key]);
            pl.push(std::move(p));
        }
        if (selector.is_map() && !selector.fields.empty()) sspec.set("selector", selector);
        if (provider == CertProvider::openshift_service_ca)
            annotate(s, "service.beta.openshift.io/serving-cert-secret-name", cert);
        out.services.push_back(std::move(s));
        if (provider != CertProvider::cert_manager) continue;
        const std::string issuer = suffixed(cert, "selfsigned-issuer");
        Node is = Node::map();
        is.set("apiVersion", Node::string("cert-manager.io/v1"));
        is.set("kind", Node::string("Issuer"));
        Node& im = is.set("metadata", Node::map());
        im.set("name", Node::string(issuer));
        im.set("namespace", Node::string(ns));
        is.set("spec", Node::map()).set("selfSigned", Node::map());
        out.cert_objects.push_back(std::move(is));
        Node c = Node::map();
        c.set("apiVersion", Node::string("cert-manager.io/v1"));
        c.set("kind", Node::string("Certificate"));
        Node& cm = c.set("metadata", Node::map());
        cm.set("name", Node::string(cert));
        cm.set("namespace", Node::string(ns));
        Node& cspec = c.set("spec", Node::map());
        cspec.set("dnsNames", Node::seq()).push(Node::string(svc + "." + ns + ".svc"));
        cspec.set("issuerRef", Node::map()).set("name", Node::string(issuer));
        cspec.set("secretName", Node::string(cert));
        cspec.set("usages", Node::seq()).push(Node::string("server auth"));
        out.cert_objects.push_back(std::move(c));
    }
    return out;
}

void mount_serving_cert(Node& deployment, const std::string& secret) {
    Node* spec = deployment.get("spec");
    Node* tmpl = spec != nullptr ? spec->get("template") : nullptr;
    Node* pod = tmpl != nullptr ? tmpl->get("spec") : nullptr;
    if (pod == nullptr || !pod->is_map()) return;
    // The volumes replaced: webhook-cert, and whatever a container mounts where the certificate
    // goes.
    std::set<std::string> replaced = {cert_volume};
    Node* containers = pod->get("containers");
    if (containers != nullptr && containers->is_seq())
        for (const auto& c : containers->items)
            if (const Node* mounts = c.get("volumeMounts"); mounts != nullptr && mounts->is_seq())
                for (const auto& m : mounts->items)
                    if (text_of(m, "mountPath") == cert_mount_path)
                        replaced.insert(text_of(m, "name"));
    Node volumes = Node::seq();
    if (const Node* v = pod->get("volumes"); v != nullptr && v->is_seq())
        for (const auto& vol : v->items)
            if (!replaced.count(text_of(vol, "name"))) volumes.push(vol);
    Node vol = Node::map();
    vol.set("name", Node::string(cert_volume));
    Node& sec = vol.set("secret", Node::map());
    sec.set("secretName", Node::string(secret));
    Node& items = sec.set("items", Node::seq());
    for (const char* k : {"tls.crt", "tls.key"}) {
        Node i = Node::map();
        i.set("key", Node::string(k));
        i.set("path", Node::string(k));
        items.push(std::move(i));
    }
    volumes.push(std::move(vol));
    pod->set("volumes", std::move(volumes));
    // Fetched again: adding "volumes" to the pod may have moved its fields.
    containers = pod->get("containers");
    if (containers == nullptr || !containers->is_seq()) return;
    for (auto& c : containers->items) {
        Node mounts = Node::seq();
        if (const Node* m = c.get("volumeMounts"); m != nullptr && m->is_seq())
            for (const auto& mount : m->items)
                if (!replaced.count(text_of(mount, "name"))) mounts.push(mount);
        Node mount = Node::map();
        mount.set("name", Node::string(cert_volume));
        mount.set("mountPath", Node::string(cert_mount_path));
        mounts.push(std::move(mount));
        c.set("volumeMounts", std::move(mounts));
    }
}

} // namespace detail

} // namespace kpkg::plan
