// The lexer of text/template: the text is cut into text runs and actions; inside an action,
// Go's tokens. Trim markers ("{{- " and " -}}") remove the white space next to them from the
// neighbouring text; comments ("{{/* */}}") produce nothing.
#include "internal.hpp"

#include <cstdio>

namespace kpkg::tmpl {
namespace {

constexpr std::string_view kLeft = "{{", kRight = "}}";

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
bool is_alnum(unsigned char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80; // letters beyond ASCII: accepted as part of a name
}

class Lexer {
public:
    explicit Lexer(std::string_view s) : in_(s) {}

    std::vector<Token> run() {
        while (!done_) {
            if (!text()) break;
        }
        return std::move(out_);
    }

private:
    std::string_view in_;
    std::size_t pos_ = 0, start_ = 0;
    std::uint32_t line_ = 1, start_line_ = 1;
    int paren_ = 0;
    bool done_ = false;
    std::vector<Token> out_;

    void emit(Tok t, std::string val) {
        out_.push_back({t, static_cast<std::uint32_t>(start_), start_line_, std::move(val)});
        start_ = pos_;
        start_line_ = line_;
    }
    void emit(Tok t) { emit(t, std::string(in_.substr(start_, pos_ - start_))); }
    void advance(std::size_t n) {
        for (std::size_t i = 0; i < n && pos_ < in_.size(); ++i)
            if (in_[pos_++] == '\n') ++line_;
    }
    void ignore() {
        start_ = pos_;
        start_line_ = line_;
    }
    bool error(std::string msg) {
        out_.push_back({Tok::error, static_cast<std::uint32_t>(start_), line_, std::move(msg)});
        done_ = true;
        return false;
    }
    char peek(std::size_t k = 0) const { return pos_ + k < in_.size() ? in_[pos_ + k] : '\0'; }
    bool at_end(std::size_t k = 0) const { return pos_ + k >= in_.size(); }

    static bool left_trim(std::string_view s) {
        return s.size() >= 2 && s[0] == '-' && is_space(s[1]);
    }
    static bool right_trim(std::string_view s) {
        return s.size() >= 2 && is_space(s[0]) && s[1] == '-';
    }

    // At the closing delimiter (with or without its trim marker)? Sets `trim`.
    bool at_right(bool& trim) const {
        auto rest = in_.substr(pos_);
        if (right_trim(rest) && rest.substr(2).starts_with(kRight)) {
            trim = true;
            return true;
        }
        trim = false;
        return rest.starts_with(kRight);
    }

    // Text up to the next action; then the action.
    bool text() {
        std::size_t at = in_.find(kLeft, pos_);
        if (at == std::string_view::npos) {
            advance(in_.size() - pos_);
            if (pos_ > start_) emit(Tok::text);
            emit(Tok::eof, "");
            done_ = true;
            return true;
        }
        std::size_t trim_len = left_trim(in_.substr(at + kLeft.size())) ? 2 : 0;
        advance(at - pos_);
        std::size_t end = pos_;
        if (trim_len)
            while (end > start_ && is_space(in_[end - 1]))
                --end;
        if (end > start_) emit_text(start_, end);
        ignore();
        return action(trim_len);
    }

    void emit_text(std::size_t from, std::size_t to) {
        out_.push_back({Tok::text, static_cast<std::uint32_t>(from), start_line_,
                        std::string(in_.substr(from, to - from))});
    }

    // After a right delimiter with a trim marker: drop the white space that follows.
    void skip_trailing_space() {
        while (!at_end() && is_space(peek()))
            advance(1);
        ignore();
    }

    bool action(std::size_t trim_len) {
        advance(kLeft.size() + trim_len);
        // A comment fills the whole action.
        if (in_.substr(pos_).starts_with("/*")) {
            std::size_t close = in_.find("*/", pos_ + 2);
            if (close == std::string_view::npos) return error("unclosed comment");
            advance(close + 2 - pos_);
            bool trim = false;
            if (!at_right(trim)) return error("comment ends before closing delimiter");
            advance((trim ? 2 : 0) + kRight.size());
            ignore();
            if (trim) skip_trailing_space();
            return true;
        }
        emit(Tok::left, std::string(kLeft));
        paren_ = 0;
        for (;;) {
            bool trim = false;
            if (at_right(trim)) {
                if (paren_ > 0) return error("unclosed left paren");
                if (trim) advance(2), ignore();
                advance(kRight.size());
                emit(Tok::right, std::string(kRight));
                if (trim) skip_trailing_space();
                return true;
            }
            if (at_end()) return error("unclosed action");
            char c = peek();
            if (is_space(c)) {
                while (!at_end() && is_space(peek())) {
                    bool t2 = false;
                    if (at_right(t2) && t2) break;
                    advance(1);
                }
                if (pos_ > start_) emit(Tok::space);
                continue;
            }
            if (!inside(c)) return false;
        }
    }

    bool inside(char c) {
        switch (c) {
        case '=':
            advance(1);
            emit(Tok::assign);
            return true;
        case ':':
            advance(1);
            if (peek() != '=') return error("expected :=");
            advance(1);
            emit(Tok::declare);
            return true;
        case '|':
            advance(1);
            emit(Tok::pipe);
            return true;
        case ',':
            advance(1);
            emit(Tok::comma);
            return true;
        case '"':
            return quote('"', Tok::string, "unterminated quoted string");
        case '\'':
            return quote('\'', Tok::char_const, "unterminated character constant");
        case '`': {
            std::size_t close = in_.find('`', pos_ + 1);
            if (close == std::string_view::npos) return error("unterminated raw quoted string");
            advance(close + 1 - pos_);
            emit(Tok::raw_string);
            return true;
        }
        case '$':
            return field_or_variable(Tok::variable);
        case '.':
            if (peek(1) >= '0' && peek(1) <= '9') return number();
            return field_or_variable(Tok::field);
        case '(':
            advance(1);
            ++paren_;
            emit(Tok::lparen);
            return true;
        case ')':
            advance(1);
            if (--paren_ < 0) return error("unexpected right paren");
            emit(Tok::rparen);
            return true;
        default:
            break;
        }
        if (c == '+' || c == '-' || (c >= '0' && c <= '9')) return number();
        if (is_alnum(static_cast<unsigned char>(c))) return identifier();
        unsigned char u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) {
            advance(1);
            emit(Tok::ch_other);
            return true;
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, "unrecognized character in action: U+%04X", u);
        return error(buf);
    }

    bool quote(char q, Tok t, const char* unterminated) {
        advance(1);
        for (;;) {
            if (at_end() || peek() == '\n') return error(unterminated);
            char c = peek();
            advance(1);
            if (c == '\\') {
                if (at_end() || peek() == '\n') return error(unterminated);
                advance(1);
            } else if (c == q) {
                break;
            }
        }
        emit(t);
        return true;
    }

    bool at_terminator() const {
        if (at_end()) return true;
        char c = peek();
        if (is_space(c)) return true;
        switch (c) {
        case '.':
        case ',':
        case '|':
        case ':':
        case ')':
        case '(':
            return true;
        default:
            return in_.substr(pos_).starts_with(kRight);
        }
    }

    bool bad_character() {
        unsigned char u = static_cast<unsigned char>(peek());
        char buf[64];
        if (u >= 0x20 && u < 0x7f)
            std::snprintf(buf, sizeof buf, "bad character U+%04X '%c'", u, u);
        else
            std::snprintf(buf, sizeof buf, "bad character U+%04X", u);
        return error(buf);
    }

    bool field_or_variable(Tok t) {
        advance(1);
        if (at_terminator()) {
            emit(t == Tok::variable ? Tok::variable : Tok::dot);
            return true;
        }
        while (!at_end() && is_alnum(static_cast<unsigned char>(peek())))
            advance(1);
        if (!at_terminator()) return bad_character();
        emit(t);
        return true;
    }

    bool identifier() {
        while (!at_end() && is_alnum(static_cast<unsigned char>(peek())))
            advance(1);
        std::string_view word = in_.substr(start_, pos_ - start_);
        if (!at_terminator()) return bad_character();
        static const std::pair<std::string_view, Tok> keywords[] = {
            {"block", Tok::kw_block},   {"break", Tok::kw_break}, {"continue", Tok::kw_continue},
            {"define", Tok::kw_define}, {"else", Tok::kw_else},   {"end", Tok::kw_end},
            {"if", Tok::kw_if},         {"range", Tok::kw_range}, {"template", Tok::kw_template},
            {"with", Tok::kw_with},     {"nil", Tok::nil},        {"true", Tok::boolean},
            {"false", Tok::boolean},
        };
        for (const auto& [k, t] : keywords)
            if (word == k) {
                emit(t);
                return true;
            }
        emit(Tok::identifier);
        return true;
    }

    // Go's scanNumber: sign, base prefix, digits with underscores, fraction, exponent; then the
    // parser checks the value. A letter right after a number is an error here.
    bool number() {
        auto accept = [&](std::string_view set) {
            if (!at_end() && set.find(peek()) != std::string_view::npos) {
                advance(1);
                return true;
            }
            return false;
        };
        auto run = [&](std::string_view set) {
            while (accept(set)) {
            }
        };
        accept("+-");
        std::string_view digits = "0123456789_";
        if (accept("0")) {
            if (accept("xX"))
                digits = "0123456789abcdefABCDEF_";
            else if (accept("oO"))
                digits = "01234567_";
            else if (accept("bB"))
                digits = "01_";
        }
        run(digits);
        if (accept(".")) run(digits);
        if (digits.size() == 11 && accept("eE")) {
            accept("+-");
            run("0123456789_");
        }
        if (digits.size() == 23 && accept("pP")) {
            accept("+-");
            run("0123456789_");
        }
        accept("i");
        if (!at_end() && is_alnum(static_cast<unsigned char>(peek()))) {
            advance(1);
            return error("bad number syntax: \"" + std::string(in_.substr(start_, pos_ - start_)) +
                         "\"");
        }
        emit(Tok::number);
        return true;
    }
};

} // namespace

std::vector<Token> lex(std::string_view text) {
    return Lexer(text).run();
}

} // namespace kpkg::tmpl
