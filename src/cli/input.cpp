#include "input.hpp"

#include "images.hpp"
#include "kpkg/core/error.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/oci/location.hpp"
#include "kpkg/plan/image.hpp"

namespace kpkg::cli {

std::unique_ptr<io::Tree> open_input(const std::string& argument, Want want) {
    auto where = oci::locate(argument);
    if (!where) throw Exception(std::move(where).error());
    if (!where->is_image()) return io::open_path(argument);

    const oci::Platform platform = input_platform();
    oci::Content image = read_image(*where, platform);
    const std::string name = where->kind == oci::Location::Kind::registry ? where->reference.str()
                                                                          : oci::to_string(*where);
    ImageView v = view_image(image, platform, name);
    auto cls = plan::classify(v.config.labels, *image_subtree(v, "", name + ":/"), name);
    if (!cls) throw Exception(std::move(cls).error());
    const bool ok = want == Want::any ||
                    (want == Want::bundle && cls->kind == plan::ImageKind::bundle) ||
                    (want == Want::catalog && cls->kind == plan::ImageKind::catalog);
    if (!ok)
        throw Exception(Error::invalid(text::quote(name) + " is a " +
                                       plan::kind_description(cls->kind) + " image, not a " +
                                       (want == Want::bundle ? "bundle" : "catalog") + " image"));
    if (cls->root.empty()) return image_subtree(v, "", name + ":/");
    return image_subtree(v, cls->root, name + ":/" + cls->root);
}

} // namespace kpkg::cli
