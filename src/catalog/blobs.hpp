// Reading the blobs of one catalog file into the compact model, from parser events, the way opm
// reads them (operator-registry alpha/declcfg load.go and declcfg.go, alpha/property):
//
// - A file whose first non-blank character (in its first 4096 bytes) is '{' is a stream of JSON
//   values; if its first or second value does not parse as JSON, the rest (from the end of the
//   last good value) is read as YAML, as Kubernetes' YAMLOrJSONDecoder does. Otherwise the file is
//   YAML, cut into documents at lines that are "---" (optionally followed by blanks or a comment);
//   "---" followed by anything else is an error. Every piece of text between such lines is a
//   document, also one holding only comments or blank lines (which has no schema).
// - Keys "schema", "package" and "name" of a blob are matched without regard to case, and two keys
//   of a blob that differ only in case are an error; their values must be strings. A blob without
//   schema is an error; a schema kpkg does not model is kept as an Other.
// - The fields of olm.package, olm.channel, olm.bundle and olm.deprecations blobs are read as Go's
//   encoding/json decodes them into opm's structs: names without regard to case, null for any
//   field, unknown fields ignored, a field of the wrong type an error (the field is left empty).
// - Bundle properties are checked as property.Parse checks them (olm.package, olm.gvk,
//   olm.gvk.required, olm.package.required, olm.bundle.object whose data must be base64,
//   olm.csv.metadata, olm.channel); a malformed one is left out.
// Every problem goes to the part's `problems` with its position, and reading goes on; a file that
// does not parse stops at the error (blobs before it are kept).
#pragma once

#include <string>
#include <string_view>

#include "kpkg/io/load.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::catalog::detail {

struct ReadOptions {
    io::Limits limits;
    bool keep_payloads = false;
};

// Adds the blobs of one file to `part` (a catalog of its own: strings interned in its pool, the
// file as files[1], named `display` in positions and problems).
void read_blobs(std::string_view text, const std::string& display, model::Catalog& part,
                const ReadOptions& options);

} // namespace kpkg::catalog::detail
