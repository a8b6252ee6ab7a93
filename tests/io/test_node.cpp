// io::Node's path lookup: the one way areas reach a field a few maps down ({"metadata", "name"}).
#include <string>

#include <gtest/gtest.h>

#include "kpkg/io/load.hpp"
#include "kpkg/io/node.hpp"

using namespace kpkg::io;

namespace {

Node doc(const std::string& yaml) {
    auto docs = parse_yaml(yaml, "test.yaml");
    EXPECT_TRUE(docs) << docs.error().message;
    return docs && !docs->empty() ? (*docs)[0].root : Node{};
}

TEST(NodePath, FindsNestedFields) {
    const Node n = doc("metadata:\n  name: a\n  labels: {x: '1'}\nspec: {replicas: 3}\n");
    ASSERT_NE(n.at_path({"metadata", "name"}), nullptr);
    EXPECT_EQ(n.at_path({"metadata", "name"})->text, "a");
    EXPECT_EQ(n.at_path({"metadata", "labels", "x"})->text, "1");
    EXPECT_EQ(n.at_path({"spec", "replicas"})->as_int(), 3);
    EXPECT_EQ(n.at_path({}), &n);
}

TEST(NodePath, AbsentOrNotAMapIsNull) {
    const Node n = doc("metadata:\n  name: a\nitems: [b]\nnone: null\n");
    EXPECT_EQ(n.at_path({"metadata", "namespace"}), nullptr);
    EXPECT_EQ(n.at_path({"spec", "replicas"}), nullptr);
    EXPECT_EQ(n.at_path({"metadata", "name", "x"}), nullptr); // a scalar on the way
    EXPECT_EQ(n.at_path({"items", "0"}), nullptr);            // lists are not indexed
    EXPECT_EQ(n.at_path({"none", "x"}), nullptr);
    EXPECT_EQ(Node{}.at_path({"a"}), nullptr);
}

TEST(NodePath, TextOfScalarsOnly) {
    const Node n = doc("a: {b: x, n: 1.5, t: true, z: null, e: '', m: {k: v}, l: [1]}\n");
    EXPECT_EQ(n.text_at({"a", "b"}), "x");
    EXPECT_EQ(n.text_at({"a", "n"}), "1.5");  // numbers as written
    EXPECT_EQ(n.text_at({"a", "t"}), "true"); // booleans as written
    EXPECT_EQ(n.text_at({"a", "z"}), "");     // null
    EXPECT_EQ(n.text_at({"a", "e"}), "");
    EXPECT_EQ(n.text_at({"a", "m"}), ""); // a map
    EXPECT_EQ(n.text_at({"a", "l"}), ""); // a list
    EXPECT_EQ(n.text_at({"a", "missing"}), "");
}

TEST(NodePath, NullTolerantFreeForm) {
    const Node n = doc("spec: {install: {strategy: deployment}}\n");
    const Node* spec = at_path(&n, {"spec"});
    ASSERT_NE(spec, nullptr);
    EXPECT_EQ(at_path(spec, {"install", "strategy"})->text, "deployment");
    const Node* none = at_path(&n, {"status"});
    EXPECT_EQ(none, nullptr);
    EXPECT_EQ(at_path(none, {"x"}), nullptr);
    EXPECT_EQ(at_path(nullptr, {}), nullptr);
}

TEST(NodePath, MutableNodesToo) {
    Node n = Node::map();
    n.set("metadata", Node::map()).set("name", Node::string("built"));
    EXPECT_EQ(n.text_at({"metadata", "name"}), "built");
}

} // namespace
