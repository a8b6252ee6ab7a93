// model::GVK: the one GVK type (bundle and resolve use it), its order and its two text forms.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "kpkg/model/gvk.hpp"

using kpkg::model::GVK;

TEST(Gvk, TextForms) {
    const GVK etcd{"etcd.database.coreos.com", "v1beta2", "EtcdCluster"};
    EXPECT_EQ(etcd.str(), "etcd.database.coreos.com/v1beta2/EtcdCluster");
    EXPECT_EQ(etcd.words(), "API etcd.database.coreos.com/v1beta2 EtcdCluster");
    // The core group is empty: the key keeps its slash, so "/v1/Pod" differs from "v1/Pod/".
    const GVK pod{"", "v1", "Pod"};
    EXPECT_EQ(pod.str(), "/v1/Pod");
    EXPECT_EQ(pod.words(), "API /v1 Pod");
}

TEST(Gvk, MessageFormEscapesAndCutsInput) {
    const GVK odd{"a\nb", "v1", std::string(300, 'K')};
    const std::string w = odd.words();
    EXPECT_EQ(w.find('\n'), std::string::npos) << w;
    EXPECT_EQ(w.rfind("API a\\nb/v1 KKK", 0), 0u) << w;
    EXPECT_LT(w.size(), 300u + 20u) << w; // the kind is cut, its size given
    EXPECT_NE(w.find("(300 bytes)"), std::string::npos) << w;
    // The key form is the identity: never cut.
    EXPECT_EQ(odd.str().size(), 3u + 1 + 2 + 1 + 300);
}

TEST(Gvk, EqualityAndOrderByGroupVersionKind) {
    EXPECT_EQ((GVK{"g", "v1", "K"}), (GVK{"g", "v1", "K"}));
    EXPECT_NE((GVK{"g", "v1", "K"}), (GVK{"g", "v1", "k"}));
    const std::set<GVK> s{{"b", "v1", "A"}, {"a", "v2", "A"}, {"a", "v1", "B"}, {"a", "v1", "A"}};
    std::vector<std::string> order;
    for (const GVK& g : s)
        order.push_back(g.str());
    EXPECT_EQ(order, (std::vector<std::string>{"a/v1/A", "a/v1/B", "a/v2/A", "b/v1/A"}));
    // Usable as a map key, as the resolver keys APIs.
    std::map<GVK, int> providers;
    ++providers[{"g", "v1", "K"}];
    ++providers[{"g", "v1", "K"}];
    EXPECT_EQ(providers.size(), 1u);
    EXPECT_EQ(providers.begin()->second, 2);
}
