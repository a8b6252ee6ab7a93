// Go's sort.Slice order, private to src/catalog.
//
// opm sorts channels and bundles by name and a bundle's relatedImages by image with sort.Slice,
// which is not stable: when two elements compare equal (two relatedImages entries with the same
// image and different names, which real catalogs have), the order they come out in is whatever
// Go's pattern-defeating quicksort leaves. That order is deterministic for a given input, so to
// write the same bytes as opm this file reproduces the algorithm's sequence of comparisons and
// swaps as Go (1.21 and later) performs it: insertion sort up to 12 elements, a median-of-three
// or Tukey-ninther pivot with the sorted/reversed hints, partial insertion sort on likely-sorted
// input, pattern breaking with a 64-bit xorshift seeded by the length, a heapsort fallback after
// bits.Len(n) bad pivots, and the "equal to the previous pivot" partition for runs of duplicates.
// Written from the algorithm's description (Peters, "Pattern-defeating Quicksort", 2021) and the
// parameters Go uses; no Go code is copied.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kpkg::catalog::detail {

template <class T, class Less>
class GoSorter {
public:
    GoSorter(std::vector<T>& v, Less less) : v_(v), less_(less) {}

    void sort() {
        const std::size_t n = v_.size();
        if (n < 2) return;
        pdq(0, n, std::bit_width(n));
    }

private:
    bool lt(std::size_t i, std::size_t j) { return less_(v_[i], v_[j]); }
    void swap(std::size_t i, std::size_t j) { std::swap(v_[i], v_[j]); }

    void insertion(std::size_t a, std::size_t b) {
        for (std::size_t i = a + 1; i < b; ++i)
            for (std::size_t j = i; j > a && lt(j, j - 1); --j)
                swap(j, j - 1);
    }

    void sift_down(std::size_t lo, std::size_t hi, std::size_t first) {
        std::size_t root = lo;
        for (;;) {
            std::size_t child = 2 * root + 1;
            if (child >= hi) return;
            if (child + 1 < hi && lt(first + child, first + child + 1)) ++child;
            if (!lt(first + root, first + child)) return;
            swap(first + root, first + child);
            root = child;
        }
    }

    void heap(std::size_t a, std::size_t b) {
        const std::size_t first = a, hi = b - a;
        for (std::size_t i = (hi - 1) / 2 + 1; i-- > 0;)
            sift_down(i, hi, first);
        for (std::size_t i = hi; i-- > 0;) {
            swap(first, first + i);
            sift_down(0, i, first);
        }
    }

    enum class Hint { unknown, increasing, decreasing };

    // The index of the median of v[a], v[b], v[c]; counts the swaps a sorting network would do.
    std::size_t median(std::size_t a, std::size_t b, std::size_t c, int& swaps) {
        auto order = [&](std::size_t& x, std::size_t& y) {
            if (lt(y, x)) {
                ++swaps;
                std::swap(x, y);
            }
        };
        order(a, b);
        order(b, c);
        order(a, b);
        return b;
    }

    std::pair<std::size_t, Hint> choose_pivot(std::size_t a, std::size_t b) {
        const std::size_t l = b - a;
        int swaps = 0;
        std::size_t i = a + l / 4 * 1, j = a + l / 4 * 2, k = a + l / 4 * 3;
        if (l >= 8) {
            if (l >= 50) {
                i = median(i - 1, i, i + 1, swaps);
                j = median(j - 1, j, j + 1, swaps);
                k = median(k - 1, k, k + 1, swaps);
            }
            j = median(i, j, k, swaps);
        }
        if (swaps == 0) return {j, Hint::increasing};
        if (swaps == 12) return {j, Hint::decreasing};
        return {j, Hint::unknown};
    }

    void reverse(std::size_t a, std::size_t b) {
        for (std::size_t i = a, j = b - 1; i < j; ++i, --j)
            swap(i, j);
    }

    // True when v[a:b] is sorted at the end; shifts at most five out-of-order pairs into place.
    bool partial_insertion(std::size_t a, std::size_t b) {
        std::size_t i = a + 1;
        for (int step = 0; step < 5; ++step) {
            while (i < b && !lt(i, i - 1))
                ++i;
            if (i == b) return true;
            if (b - a < 50) return false;
            swap(i, i - 1);
            if (i - a >= 2) {
                for (std::size_t j = i - 1; j >= 1; --j) {
                    if (!lt(j, j - 1)) break;
                    swap(j, j - 1);
                }
            }
            if (b - i >= 2) {
                for (std::size_t j = i + 1; j < b; ++j) {
                    if (!lt(j, j - 1)) break;
                    swap(j, j - 1);
                }
            }
        }
        return false;
    }

    void break_patterns(std::size_t a, std::size_t b) {
        const std::size_t length = b - a;
        if (length < 8) return;
        std::uint64_t r = length;
        const std::uint64_t mask = (std::uint64_t{1} << std::bit_width(length)) - 1;
        for (std::size_t idx = a + (length / 4) * 2 - 1; idx <= a + (length / 4) * 2 + 1; ++idx) {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            auto other = static_cast<std::size_t>(r & mask);
            if (other >= length) other -= length;
            swap(idx, a + other);
        }
    }

    // v[a:b] into elements less than the pivot, the pivot, and the others; returns where the
    // pivot ends and whether nothing had to move.
    std::pair<std::size_t, bool> partition(std::size_t a, std::size_t b, std::size_t pivot) {
        swap(a, pivot);
        std::size_t i = a + 1, j = b - 1; // inclusive bounds; j may pass below i
        while (i <= j && lt(i, a))
            ++i;
        while (i <= j && !lt(j, a))
            --j;
        if (i > j) {
            swap(j, a);
            return {j, true};
        }
        swap(i, j);
        ++i;
        --j;
        for (;;) {
            while (i <= j && lt(i, a))
                ++i;
            while (i <= j && !lt(j, a))
                --j;
            if (i > j) break;
            swap(i, j);
            ++i;
            --j;
        }
        swap(j, a);
        return {j, false};
    }

    // v[a:b] (no element less than the pivot) into elements equal to it, then greater ones.
    std::size_t partition_equal(std::size_t a, std::size_t b, std::size_t pivot) {
        swap(a, pivot);
        std::size_t i = a + 1, j = b - 1;
        for (;;) {
            while (i <= j && !lt(a, i))
                ++i;
            while (i <= j && lt(a, j))
                --j;
            if (i > j) break;
            swap(i, j);
            ++i;
            --j;
        }
        return i;
    }

    void pdq(std::size_t a, std::size_t b, int limit) {
        bool was_balanced = true, was_partitioned = true;
        for (;;) {
            const std::size_t length = b - a;
            if (length <= 12) {
                insertion(a, b);
                return;
            }
            if (limit == 0) {
                heap(a, b);
                return;
            }
            if (!was_balanced) {
                break_patterns(a, b);
                --limit;
            }
            auto [pivot, hint] = choose_pivot(a, b);
            if (hint == Hint::decreasing) {
                reverse(a, b);
                pivot = (b - 1) - (pivot - a);
                hint = Hint::increasing;
            }
            if (was_balanced && was_partitioned && hint == Hint::increasing &&
                partial_insertion(a, b))
                return;
            if (a > 0 && !lt(a - 1, pivot)) {
                a = partition_equal(a, b, pivot);
                continue;
            }
            const auto [mid, already] = partition(a, b, pivot);
            was_partitioned = already;
            const std::size_t left = mid - a, right = b - mid;
            const std::size_t threshold = length / 8;
            if (left < right) {
                was_balanced = left >= threshold;
                pdq(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right >= threshold;
                pdq(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    std::vector<T>& v_;
    Less less_;
};

// Sorts v as Go's sort.Slice(v, less) does, leaving equal elements in the same order as Go.
template <class T, class Less>
void go_sort_slice(std::vector<T>& v, Less less) {
    GoSorter<T, Less>(v, less).sort();
}

} // namespace kpkg::catalog::detail
