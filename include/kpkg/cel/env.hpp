// What a CEL program may refer to, given by the caller: its variables with their types (checked
// when the program is compiled) and, when it is evaluated, their values.
//
// OLM's environment (Env::olm()) declares one variable, `properties` of type
// list(map(string, dyn)), and the function semver_compare; another caller (Package Operator's
// `config`, `cond`, ...) declares its own variables the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/io/node.hpp"

namespace kpkg::cel {

// A static type of the checker: dyn (decided by the data), null_type, bool, int, uint, double,
// string, list(T), map(K, V).
struct Type;
using TypeP = std::shared_ptr<const Type>;
struct Type {
    enum class K : std::uint8_t { dyn, null, boolean, int_, uint_, dbl, str, list, map };
    K k = K::dyn;
    TypeP a, b; // list: element; map: key, value
};
TypeP prim(Type::K k);
TypeP list_of(TypeP element);
TypeP map_of(TypeP key, TypeP value);
// As CEL writes it: "list(map(string, dyn))".
std::string type_name(const TypeP& t);

// One property of a bundle as a rule sees it: its type and its value as a JSON value (olm.gvk:
// {"group", "version", "kind"}, olm.package: {"packageName", "version"}, ...).
struct Property {
    std::string type;
    io::Node value;
};

class Env {
public:
    struct Variable {
        std::string name;
        TypeP type;
    };

    // OLM's: `properties` list(map(string, dyn)), semver_compare, rules of type bool called
    // "an olm.constraint rule" in messages.
    static const Env& olm();

    // Declares a variable (a second declaration of a name replaces the first).
    Env& variable(std::string name, TypeP type);
    // Makes semver_compare(a, b) available.
    Env& semver_compare(bool on = true);
    // What a program is called in the message about a result that is not bool.
    Env& noun(std::string what);
    // Accepts a program of type dyn (`config.enabled`), as cel-go's Compile does: whether it is
    // a bool is then decided when it is evaluated (another value is an evaluation error).
    Env& dyn_result(bool on = true);

    const std::vector<Variable>& variables() const { return vars_; }
    std::optional<std::size_t> find(std::string_view name) const;
    bool has_semver_compare() const { return semver_compare_; }
    bool allows_dyn_result() const { return dyn_result_; }
    const std::string& noun() const { return noun_; }

private:
    std::vector<Variable> vars_;
    bool semver_compare_ = false;
    bool dyn_result_ = false;
    std::string noun_ = "a rule";
};

// The values of a program's variables for one evaluation. Values are viewed, not copied: what
// is bound must outlive the evaluation.
class Activation {
public:
    // How numbers of a bound node read: as Go's encoding/json reads JSON (every number a double,
    // as OLM's properties), or typed (an integer is an int, as YAML types it).
    enum class Numbers : std::uint8_t { json, typed };

    Activation& bind(std::string name, const io::Node& value, Numbers numbers = Numbers::json);
    // A list of properties (for a variable of type list(map(string, dyn)), e.g. `properties`).
    Activation& bind(std::string name, const std::vector<Property>& properties);

    struct Binding {
        std::string name;
        const io::Node* node = nullptr;
        const std::vector<Property>* properties = nullptr;
        bool typed = false;
    };
    const Binding* find(std::string_view name) const;

private:
    std::vector<Binding> bindings_;
};

} // namespace kpkg::cel
