// Webhooks of a CSV without OLM (the manifests tree): what OLM v1 checks and makes of
// spec.webhookdefinitions with a certificate provider (cert-manager or OpenShift's service CA).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/plan/tree.hpp"

namespace kpkg::plan::detail {

struct WebhookObjects {
    // CRD name -> its spec.conversion and the annotations to add (conversion webhooks).
    std::map<std::string, io::Node> conversions;
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> crd_annotations;
    // Deployment name -> the secret its serving certificate is mounted from.
    std::map<std::string, std::string> cert_secrets;
    std::vector<io::Node> services;       // a Service per deployment serving webhooks
    std::vector<io::Node> configurations; // Validating/MutatingWebhookConfigurations
    std::vector<io::Node> cert_objects;   // cert-manager Issuers and Certificates
};

// Checks the CSV's webhooks as OLM v1 does and makes their objects. Errors (exit 3) name the
// bundle: a webhook naming no deployment of the install strategy, two webhooks of one type and
// name, a conversion webhook in a bundle that supports more than AllNamespaces, one naming a CRD
// the bundle does not own or that another conversion webhook names, a rule on API groups OLM
// forbids (all, olm.operatorframework.io, the webhook configurations themselves).
Result<WebhookObjects> webhook_objects(const std::string& bundle, const io::Node& csv,
                                       const std::vector<io::Node>& crds, const std::string& ns,
                                       const std::vector<std::string>& targets,
                                       CertProvider provider);

// Mounts the serving certificate of `secret` into a webhook Deployment's pod template as OLM v1
// does (volume webhook-cert at /tmp/k8s-webhook-server/serving-certs in every container,
// replacing volumes mounted there).
void mount_serving_cert(io::Node& deployment, const std::string& secret);

} // namespace kpkg::plan::detail
