// Result<T>: a value or an Error, returned by library functions that can fail on bad input.
#pragma once

#include "kpkg/core/error.hpp"

#include <type_traits>
#include <utility>
#include <variant>

namespace kpkg {

// Wraps an Error so `return fail(...)` converts into any Result<T>.
struct Failure {
    Error error;
};

inline Failure fail(Error e) {
    return Failure{std::move(e)};
}

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    Result(Failure f) : v_(std::in_place_index<1>, std::move(f.error)) {}
    Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}

    bool ok() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    T& value() & {
        check();
        return std::get<0>(v_);
    }
    const T& value() const& {
        check();
        return std::get<0>(v_);
    }
    T&& value() && {
        check();
        return std::get<0>(std::move(v_));
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const Error& error() const& { return std::get<1>(v_); }
    Error&& error() && { return std::get<1>(std::move(v_)); }

    // The value, or throws kpkg::Exception carrying the error.
    T take() && {
        check();
        return std::get<0>(std::move(v_));
    }

private:
    void check() const {
        if (v_.index() != 0) throw Exception(std::get<1>(v_));
    }
    std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Failure f) : err_(std::move(f.error)), ok_(false) {}
    Result(Error e) : err_(std::move(e)), ok_(false) {}

    bool ok() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    const Error& error() const& { return err_; }
    Error&& error() && { return std::move(err_); }
    void take() && {
        if (!ok_) throw Exception(std::move(err_));
    }

private:
    Error err_;
    bool ok_ = true;
};

template <class T>
inline constexpr bool is_result_v = false;
template <class T>
inline constexpr bool is_result_v<Result<T>> = true;

// The boundary between code that reports errors by throwing kpkg::Exception (internal helpers,
// Result::take()) and a library function that returns Result: runs f() and returns its value
// (nothing when it returns void), or the Error of a kpkg::Exception that f throws. Only
// kpkg::Exception is caught; any other exception passes through.
// Usage: return catch_error([&] { return parse_all(text); });
template <class F>
auto catch_error(F&& f) -> Result<std::invoke_result_t<F&>> {
    using T = std::invoke_result_t<F&>;
    static_assert(!is_result_v<T>, "the callable reports errors by throwing, not as a Result");
    try {
        if constexpr (std::is_void_v<T>) {
            f();
            return {};
        } else {
            return f();
        }
    } catch (const Exception& e) {
        return e.error();
    }
}

} // namespace kpkg
