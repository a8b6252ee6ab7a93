// Registry credentials as container tools keep them: auth.json files (containers) and Docker's
// config.json, with credential helpers. Lookup only: kpkg never writes these files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"

namespace kpkg::oci {

// A user name and password (or an identity token as the password) for one registry.
struct Credential {
    std::string username;
    std::string password;
    // Where they came from, for messages: a file path or "docker-credential-<name>".
    std::string source;

    friend bool operator==(const Credential&, const Credential&) = default;
};

// The files searched for credentials, in order: $REGISTRY_AUTH_FILE,
// $XDG_RUNTIME_DIR/containers/auth.json, $HOME/.config/containers/auth.json,
// $HOME/.docker/config.json (variables unset or empty are skipped). Files that do not exist are
// kept in the list; lookup skips them.
std::vector<std::filesystem::path> default_auth_files();

// The keys a registry host is known by in an `auths` map: the host itself, "https://host",
// "http://host", and for docker.io also "index.docker.io", "registry-1.docker.io" and
// "https://index.docker.io/v1/".
std::vector<std::string> auth_keys(std::string_view host);

// The credentials for `host` (a registry as in a reference: "quay.io", "localhost:5000",
// "docker.io"): the first file of `files` that exists and names the host decides. In that file a
// `credHelpers` entry for the host wins over `auths`, and `auths` over `credsStore`; an `auths`
// entry holds `auth` (base64 of "user:password") or `username` and `password`, and an
// `identitytoken` is used as the password. A helper is run as `docker-credential-<name> get`
// with the host on standard input and answers {"Username": ..., "Secret": ...}; a helper that
// says the host is unknown counts as no entry.
// Nothing when no file knows the host. Errors (Error::invalid, naming the file): a file that is
// not JSON, an `auths` entry whose `auth` is not base64 of "user:password"; (Error::io) a file
// that cannot be read, a helper that cannot be run or fails.
Result<std::optional<Credential>>
find_credential(std::string_view host,
                const std::vector<std::filesystem::path>& files = default_auth_files());

// Runs `docker-credential-<helper> get` for `host` (the PATH is searched). Nothing when the
// helper answers that it has no credentials for the host.
Result<std::optional<Credential>> run_credential_helper(std::string_view helper,
                                                        std::string_view host);

// One challenge of a WWW-Authenticate header: the scheme ("Bearer", "Basic") in the case the
// server wrote it and its parameters (realm, service, scope, error, ...), keys in lower case.
struct Challenge {
    std::string scheme;
    std::vector<std::pair<std::string, std::string>> params;

    // The value of a parameter, "" when absent.
    std::string param(std::string_view key) const;
};

// The challenges of a WWW-Authenticate header value ("Bearer realm=\"...\",service=\"...\"",
// several comma-separated challenges, quoted strings with backslash escapes, bare tokens).
std::vector<Challenge> parse_challenges(std::string_view header);

} // namespace kpkg::oci
