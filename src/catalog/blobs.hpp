// Reading the blobs of one catalog file into the compact model, from parser events, the way opm
// reads them (operator-registry alpha/declcfg load.go and declcfg.go, alpha/property):
//
// - The file is cut into JSON values and YAML documents by fbc_text.hpp's rules (shared with
//   `catalog render`); a document holding only comments, blank lines or a "---" marker is a blob
//   without schema. A YAML document is its first node (yaml.v2), its keys spelled as
//   sigs.k8s.io/yaml spells them (values.hpp yaml_key), !!binary scalars decoded.
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
