#include "input.hpp"

#include "images.hpp"
#include "kpkg/core/error.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/oci/location.hpp"
#include "kpkg/plan/image.hpp"

namespace kpkg::cli {

namespace {

Input open_impl(const std::string& argument, Want want) {
    Input in;
    auto where = oci::locate(argument);
    if (!where) throw Exception(std::move(where).error());
    if (!where->is_image()) {
        in.tree = io::open_path(argument);
        return in;
    }
    in.image = true;
    const oci::Platform platform = input_platform();
    oci::Content image = read_image(*where, platform);
    const std::string name = where->kind == oci::Location::Kind::registry ? where->reference.str()
                                                                          : oci::to_string(*where);
    if (where->kind == oci::Location::Kind::registry) in.reference = where->reference.str();
    ImageView v = view_image(image, platform, name);
    auto root = image_subtree(v, "", name + ":/");
    auto cls = plan::classify(v.config.labels, *root, name);
    if (!cls) throw Exception(std::move(cls).error());
    const bool ok = want == Want::any ||
                    (want == Want::bundle && cls->kind == plan::ImageKind::bundle) ||
                    (want == Want::catalog && cls->kind == plan::ImageKind::catalog) ||
                    (want == Want::bundle_or_catalog && cls->kind != plan::ImageKind::package);
    if (!ok) {
        const char* wanted = want == Want::bundle    ? "bundle"
                             : want == Want::catalog ? "catalog"
                                                     : "bundle or catalog";
        throw Exception(Error::invalid(text::quote(name) + " is a " +
                                       plan::kind_description(cls->kind) + " image, not a " +
                                       wanted + " image"));
    }
    in.bundle = cls->kind == plan::ImageKind::bundle;
    // A bundle image is read from its root, already made for the classification.
    in.tree =
        cls->root.empty() ? std::move(root) : image_subtree(v, cls->root, name + ":/" + cls->root);
    return in;
}

} // namespace

std::unique_ptr<io::Tree> open_input(const std::string& argument, Want want) {
    return open_impl(argument, want).tree;
}

Input open_any_input(const std::string& argument) {
    return open_impl(argument, Want::bundle_or_catalog);
}

} // namespace kpkg::cli
