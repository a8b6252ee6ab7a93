// Errors of libkpkg: what went wrong, where, and which exit code it maps to.
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kpkg {

// The process exit codes of kpkg. Every library error carries one of these kinds.
enum class ExitCode : int {
    ok = 0,
    error = 1,         // I/O, network, internal
    usage = 2,         // bad command line
    invalid = 3,       // input does not parse or does not validate
    unsatisfiable = 4, // a resolution has no solution
    differs = 5,       // differences found (comparisons run with --exit-code)
};

// Where in the input an error is. Lines and columns are 1-based; 0 means unknown.
// `document` is the 0-based index of the document in a YAML stream or JSON sequence, -1 if unknown.
struct SourcePos {
    std::string file;
    std::uint32_t line = 0;
    std::uint32_t column = 0;
    int document = -1;

    bool empty() const { return file.empty() && line == 0; }
    // "file:line:col", "file:line", "file" or "" depending on what is known.
    std::string str() const;
};

struct Error {
    ExitCode code = ExitCode::error;
    std::string message;
    SourcePos pos;
    // The object the error is about when there is no position, e.g. `package "etcd"`.
    std::string subject;
    // Extra lines shown under the message (hints, "did you mean").
    std::vector<std::string> notes;

    static Error io(std::string msg, SourcePos p = {}) {
        return {ExitCode::error, std::move(msg), std::move(p), {}, {}};
    }
    static Error invalid(std::string msg, SourcePos p = {}) {
        return {ExitCode::invalid, std::move(msg), std::move(p), {}, {}};
    }
    static Error usage(std::string msg) { return {ExitCode::usage, std::move(msg), {}, {}, {}}; }
    static Error internal(std::string msg) {
        return {ExitCode::error, "internal error: " + std::move(msg), {}, {}, {}};
    }

    Error& about(std::string s) {
        subject = std::move(s);
        return *this;
    }
    Error& note(std::string n) {
        notes.push_back(std::move(n));
        return *this;
    }

    // One line: "file:line:col: subject: message" (parts omitted when unknown), notes not included.
    std::string str() const;
};

// The one exception type of libkpkg, for code paths where returning Result is impractical.
// The CLI catches it and maps it to the error's exit code.
class Exception : public std::exception {
public:
    explicit Exception(Error e) : err_(std::move(e)), what_(err_.str()) {}
    const Error& error() const noexcept { return err_; }
    const char* what() const noexcept override { return what_.c_str(); }

private:
    Error err_;
    std::string what_;
};

// Running out of memory, saying while doing what: OutOfMemory("parsing", file) is "out of memory
// while parsing FILE". It is a std::bad_alloc, so whatever handles that handles this; the CLI
// prints what() and exits 1.
class OutOfMemory : public std::bad_alloc {
public:
    OutOfMemory(std::string_view doing, std::string_view subject) {
        what_.append("out of memory while ").append(doing).append(" ").append(subject);
    }
    const char* what() const noexcept override { return what_.c_str(); }

private:
    std::string what_;
};

} // namespace kpkg
