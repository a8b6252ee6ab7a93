// The Sprig functions kpkg provides, against what Go's text/template with Sprig v3 prints, and
// include (Package Operator's).
#include <gtest/gtest.h>

#include "kpkg/io/load.hpp"
#include "kpkg/template/template.hpp"

#include <random>
#include <string>
#include <vector>

namespace t = kpkg::tmpl;
using t::Value;

namespace {

std::shared_ptr<const t::Funcs> funcs() {
    auto f = std::make_shared<t::Funcs>();
    t::add_builtins(*f);
    t::add_sprig(*f);
    t::add_include(*f);
    return f;
}

std::string run(const std::string& text, const std::string& json = "null", t::Options opt = {}) {
    t::Set set(funcs(), opt);
    auto p = set.parse("t", text);
    if (!p) return "PARSE: " + p.error().message;
    auto docs = kpkg::io::parse_json(json, "data").take();
    auto r = set.execute("t", t::from_json(docs.at(0).root));
    if (!r) return "ERROR: " + r.error().message;
    return *r;
}

TEST(TemplateSprig, Strings) {
    EXPECT_EQ(
        run(R"({{trim "  a b \n"}}|{{trimAll "$" "$$5.00$"}}|{{trimPrefix "-" "-x-"}}|{{trimSuffix "-" "-x-"}})"),
        "a b|5.00|x-|-x");
    EXPECT_EQ(
        run(R"({{upper "hello"}} {{lower "HeLLo"}} {{title "hello world-wide x_y"}} {{untitle "Hello World"}})"),
        "HELLO hello Hello World-Wide X_y hello world");
    EXPECT_EQ(
        run(R"({{"I Am Henry VIII" | replace " " "-"}}|{{contains "cat" "catch"}}|{{hasPrefix "ca" "cat"}}|{{hasSuffix "ca" "cat"}})"),
        "I-Am-Henry-VIII|true|true|false");
    EXPECT_EQ(run(R"({{quote "a\"b" 1 nil}}|{{squote "x" 2.5}}|{{cat "a" nil 1 "b"}})"),
              "\"a\\\"b\" \"1\"|'x' '2.5'|a 1 b");
    EXPECT_EQ(run(R"({{indent 2 "a\nb"}}|{{nindent 2 "a"}}|{{repeat 3 "ab"}})"),
              "  a\n  b|\n  a|ababab");
    EXPECT_EQ(
        run(R"({{nospace "a b\tc"}}|{{trunc 3 "hello"}}|{{trunc -3 "hello"}}|{{trunc 9 "hi"}}|{{substr 1 3 "hello"}})"),
        "abc|hel|llo|hi|el");
    EXPECT_EQ(run(R"({{join "," .}}|{{splitList "," "a,b,,c"}}|{{(split "$" "foo$bar$baz")._1}})",
                  R"(["a", 1, null, true])"),
              "a,1,true|[a b  c]|bar");
    EXPECT_EQ(run(R"({{toString 1.5}}|{{toString .}})", R"({"a": 1})"), "1.5|map[a:1]");
}

TEST(TemplateSprig, TypedParametersRefuseFloatsFromJson) {
    // Numbers from the JSON context are float64; Sprig's indent takes an int.
    EXPECT_EQ(run(R"({{indent .n "x"}})", R"({"n": 2})"),
              "ERROR: template: t:1:2: executing \"t\" at <indent .n \"x\">: wrong type for value; "
              "expected int; got float64");
    EXPECT_EQ(run(R"({{upper .n}})", R"({"n": 2})"),
              "ERROR: template: t:1:2: executing \"t\" at <upper .n>: wrong type for value; "
              "expected string; got float64");
    EXPECT_EQ(run(R"({{indent (int .n) "x"}})", R"({"n": 2})"), "  x");
}

TEST(TemplateSprig, Defaults) {
    EXPECT_EQ(
        run(R"({{default "d" .a}}|{{default "d" .b}}|{{.z | default "d"}}|{{default "d" .s}})",
            R"({"a": "", "b": "x", "z": 0, "s": []})"),
        "d|x|d|d");
    EXPECT_EQ(run(R"({{empty .a}} {{empty .b}} {{empty .m}} {{empty nil}})",
                  R"({"a": 0, "b": "x", "m": {}})"),
              "true false true true");
    EXPECT_EQ(run(R"({{coalesce .a .b "c"}}|{{coalesce .a .b}})", R"({"a": null, "b": ""})"),
              "c|<no value>");
    EXPECT_EQ(run(R"({{ternary "y" "n" true}}{{true | ternary "y" "n"}}{{ternary "y" "n" false}})"),
              "yyn");
    EXPECT_EQ(run(R"({{toJson .}})", R"({"b": [1, 2.5, "<x>", null, true], "a": {}})"),
              R"({"a":{},"b":[1,2.5,"\u003cx\u003e",null,true]})");
    EXPECT_EQ(
        run(R"({{fail "boom"}})"),
        "ERROR: template: t:1:2: executing \"t\" at <fail \"boom\">: error calling fail: boom");
}

TEST(TemplateSprig, Lists) {
    EXPECT_EQ(
        run(R"({{list 1 "a" nil}}|{{first .}}|{{last .}}|{{rest .}}|{{initial .}})", "[1, 2, 3]"),
        "[1 a <nil>]|1|3|[2 3]|[1 2]");
    EXPECT_EQ(run(R"({{has 2.0 .}} {{has 2 .}} {{has "x" nil}})", "[1, 2, 3]"), "true false false");
    EXPECT_EQ(run(R"({{append . 4}}|{{prepend . 0}}|{{reverse .}}|{{.}})", "[1, 2, 3]"),
              "[1 2 3 4]|[0 1 2 3]|[3 2 1]|[1 2 3]");
    EXPECT_EQ(run(R"({{uniq .}}|{{compact .}})", R"([1, 1, "", 2, 0, null])"),
              "[1  2 0 <nil>]|[1 1 2]");
    EXPECT_EQ(run(R"({{first "abc"}})"),
              "ERROR: template: t:1:2: executing \"t\" at <first \"abc\">: error calling first: "
              "Cannot find first on type string");
}

TEST(TemplateSprig, SliceSortUntilDigTypes) {
    // Sprig's slice: float indexes from JSON are converted; strings are refused.
    EXPECT_EQ(run(R"({{slice .l 1}}|{{slice .l .one 2}}|{{slice .l}}|{{slice .e}})",
                  R"({"l": [1, 2, 3], "one": 1, "e": []})"),
              "[2 3]|[2]|[1 2 3]|<no value>");
    EXPECT_EQ(run(R"({{slice "abc" 1}})"),
              "ERROR: template: t:1:2: executing \"t\" at <slice \"abc\" 1>: error calling slice: "
              "list should be type of slice or array but string");
    EXPECT_EQ(run(R"({{sortAlpha .}}|{{until 3}}|{{until -2}})", R"(["b", "a", 10, "C"])"),
              "[10 C a b]|[0 1 2]|[0 -1]");
    EXPECT_EQ(
        run(R"({{dig "a" "b" "none" .}}|{{dig "a" "x" "none" .}}|{{dig "a" "b" "c" "none" .}})",
            R"({"a": {"b": "found"}})"),
        "found|none|none");
    EXPECT_EQ(
        run(R"({{typeOf .}} {{kindOf .}} {{kindOf .l}} {{typeOf .n}} {{kindIs "map" .}} {{typeIs "string" .s}} {{deepEqual .l .l2}})",
            R"({"l": [1], "l2": [1], "n": 1, "s": "x"})"),
        "map[string]interface {} map slice float64 true true true");
}

TEST(TemplateSprig, Dicts) {
    EXPECT_EQ(
        run(R"({{$d := dict "b" 1 "a" "x" "odd"}}{{$d}}|{{get $d "a"}}|{{get $d "zz"}}|{{hasKey $d "b"}})"),
        "map[a:x b:1 odd:]|x||true");
    // set changes the map itself (Go maps are references).
    EXPECT_EQ(run(R"({{$d := dict}}{{$_ := set $d "k" "v"}}{{$d.k}}|{{unset $d "k"}})"), "v|map[]");
    EXPECT_EQ(run(R"({{keys .}}|{{values .}}|{{pick . "a" "c"}}|{{omit . "a"}})",
                  R"({"c": 3, "a": 1, "b": 2})"),
              "[a b c]|[1 2 3]|map[a:1 c:3]|map[b:2 c:3]");
    EXPECT_EQ(run(R"({{get "x" "a"}})"),
              "ERROR: template: t:1:2: executing \"t\" at <get \"x\" \"a\">: wrong type for value; "
              "expected map[string]interface {}; got string");
}

TEST(TemplateSprig, EncodingAndNumbers) {
    EXPECT_EQ(
        run(R"({{b64enc "hello"}}|{{b64dec "aGVsbG8="}}|{{b64dec "a"}}|{{b64dec "aGVsbG8=aGk"}}|{{b64dec "a!=="}})"),
        "aGVsbG8=|hello|illegal base64 data at input byte 0|illegal base64 data at input "
        "byte 8|illegal base64 data at input byte 1");
    EXPECT_EQ(
        run(R"({{add 1 2 .n}} {{sub 5 .n}} {{mul 2 3 4}} {{div 7 2}} {{mod 7 2}} {{add1 .f}})",
            R"({"n": 3, "f": 1.9})"),
        "6 2 24 3 1 2");
    EXPECT_EQ(
        run(R"({{max 1 5 3}} {{min 4 2 8}} {{int "42"}} {{int64 3.9}} {{float64 "1.5"}} {{atoi "x"}})"),
        "5 2 42 3 1.5 0");
    EXPECT_EQ(run(R"({{div 1 0}})"),
              "ERROR: template: t:1:2: executing \"t\" at <div 1 0>: error calling div: runtime "
              "error: integer divide by zero");
    // Integer results compare with integer literals (eq int64 int is fine in Go).
    EXPECT_EQ(run(R"({{if eq (int .n) 3}}three{{end}})", R"({"n": 3})"), "three");
}

TEST(TemplateSprig, Include) {
    EXPECT_EQ(run(R"({{define "h"}}a: {{.}}
b: 2{{end}}x:{{include "h" 1 | nindent 2}})"),
              "x:\n  a: 1\n  b: 2");
    EXPECT_EQ(run(R"({{include "nope" .}})"),
              "ERROR: template: t:1:2: executing \"t\" at <include \"nope\" .>: error calling "
              "include: template: no template \"nope\" associated with template \"t\"");
    // An error inside the included template is wrapped once.
    EXPECT_EQ(run(R"({{define "h"}}{{.x}}{{end}}{{include "h" .}})", "{}"),
              "ERROR: template: t:1:29: executing \"t\" at <include \"h\" .>: error calling "
              "include: template: t:1:16: executing \"h\" at <.x>: map has no entry for key \"x\"");
    // Self-inclusion ends at the depth limit with one message.
    t::Options o;
    o.max_depth = 50;
    EXPECT_EQ(run(R"({{define "r"}}{{include "r" .}}{{end}}{{include "r" .}})", "null", o),
              "ERROR: template: t:1:16: executing \"r\" at <include \"r\" .>: exceeded maximum "
              "template depth (50)");
    // A repeat beyond the output limit is refused before it is built.
    t::Options small;
    small.max_output = 1000;
    EXPECT_EQ(run(R"({{repeat 100000 "x"}})", "null", small),
              "ERROR: template: t:1:2: executing \"t\" at <repeat 100000 \"x\">: error calling "
              "repeat: result exceeds 1000 bytes");
}

TEST(TemplateSprig, SelfContainingMapsEndWithAnError) {
    const std::string self = R"({{$d := dict}}{{$_ := set $d "self" $d}})";
    std::string r = run(self + "{{$d}}");
    EXPECT_NE(r.find("executing \"t\" at <{{$d}}>: value nested more than 1000 levels deep"),
              std::string::npos)
        << r.substr(0, 300);
    r = run(self + R"({{printf "%v" $d}})");
    EXPECT_NE(r.find("error calling printf: value nested more than 1000"), std::string::npos)
        << r.substr(0, 300);
    // Sprig's toJson gives "" when encoding fails.
    EXPECT_EQ(run(self + R"([{{toJson $d}}])"), "[]");
    // Two maps, each inside the other: comparing them does not recurse forever.
    r = run(R"({{$a := dict}}{{$b := dict}}{{$_ := set $a "x" $b}}{{$_ := set $b "x" $a}})"
            R"({{has $a (list $b)}})");
    EXPECT_NE(r.find("error calling has: value nested more than 1000"), std::string::npos)
        << r.substr(0, 300);
    // A list holding one list twice, 40 times over: 2^40 leaves to print, stopped by the output
    // limit (also inside printf and toJson).
    std::string wide = R"({{$a := list "xxxxxxxxxx"}})";
    for (int i = 0; i < 40; ++i)
        wide += "{{$a = list $a $a}}";
    t::Options o;
    o.max_output = 1 << 16;
    r = run(wide + "{{$a}}", "null", o);
    EXPECT_NE(r.find("at <{{$a}}>: value prints to more than"), std::string::npos)
        << r.substr(0, 300);
    r = run(wide + R"({{printf "%v" $a}})", "null", o);
    EXPECT_NE(r.find("error calling printf: value prints to more than"), std::string::npos)
        << r.substr(0, 300);
    EXPECT_EQ(run(wide + "[{{toJson $a}}]", "null", o), "[]");
}

// Random templates made of the language's pieces: each parses or fails with a message, and each
// that parses executes or fails with a message, within the limits; nothing crashes or hangs.
TEST(TemplateSprig, TokenSoup) {
    const std::vector<std::string> pieces = {"{{",
                                             "}}",
                                             "{{-",
                                             "-}}",
                                             " ",
                                             "\n",
                                             "if",
                                             "else",
                                             "end",
                                             "range",
                                             "with",
                                             "define",
                                             "template",
                                             "block",
                                             "break",
                                             "continue",
                                             "$",
                                             "$x",
                                             ":=",
                                             "=",
                                             ",",
                                             "|",
                                             "(",
                                             ")",
                                             ".",
                                             ".a",
                                             ".a.b",
                                             "\"s\"",
                                             "`r`",
                                             "'c'",
                                             "1",
                                             "-2",
                                             "0x1F",
                                             "1.5",
                                             "1e3",
                                             "true",
                                             "nil",
                                             "eq",
                                             "and",
                                             "or",
                                             "not",
                                             "len",
                                             "index",
                                             "printf",
                                             "\"%v %d\"",
                                             "print",
                                             "slice",
                                             "list",
                                             "dict",
                                             "set",
                                             "include",
                                             "\"t\"",
                                             "\"d\"",
                                             "default",
                                             "indent",
                                             "repeat",
                                             "toJson",
                                             "/*",
                                             "*/",
                                             "{{/* c */}}",
                                             "{{define \"d\"}}",
                                             "{{end}}",
                                             "{{template \"d\" .}}",
                                             "x"};
    std::mt19937 rng(12345);
    t::Options o;
    o.max_steps = 20000;
    o.max_output = 1 << 16;
    o.max_depth = 50;
    int parsed = 0, executed = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string text;
        int n = 1 + static_cast<int>(rng() % 14);
        for (int k = 0; k < n; ++k)
            text += pieces[rng() % pieces.size()];
        t::Set set(funcs(), o);
        auto p = set.parse("t", text);
        if (!p) {
            EXPECT_EQ(p.error().message.rfind("template: t:", 0), 0u) << text;
            continue;
        }
        ++parsed;
        auto r = set.execute(
            "t",
            t::from_json(kpkg::io::parse_json(R"({"a": {"b": [1, 2]}})", "d").take().at(0).root));
        if (r)
            ++executed;
        else
            EXPECT_EQ(r.error().message.rfind("template: ", 0), 0u) << text;
    }
    EXPECT_GT(parsed, 100);
    EXPECT_GT(executed, 50);
}

// ------------------------------------------------------------------------------------------------
// Integer edges: what Go (amd64) with Sprig v3.3 and spf13/cast v1.7 gives, never a crash.

constexpr const char* kMin = "-9223372036854775808";
constexpr const char* kMax = "9223372036854775807";

TEST(TemplateSprig, DivisionOfTheSmallestIntegerByMinusOneWrapsAsInGo) {
    // Go's MinInt64 / -1 is MinInt64 and MinInt64 % -1 is 0 (x86's idiv would trap).
    EXPECT_EQ(run(R"({{div (sub -9223372036854775807 1) -1}})"), kMin);
    EXPECT_EQ(run(R"({{div -9223372036854775808 -1}}|{{mod -9223372036854775808 -1}})"),
              std::string(kMin) + "|0");
    EXPECT_EQ(run(R"({{mod (sub -9223372036854775807 1) -1}}|{{div "-9223372036854775808" -1}})"),
              std::string("0|") + kMin);
    EXPECT_EQ(run(R"({{mod -9223372036854775808.0 -1}}|{{div 7 -1}}|{{mod 7 -1}}|{{mod -7 2}})"),
              "0|-7|0|-1");
    EXPECT_EQ(run(R"({{mod 1 0}})"),
              "ERROR: template: t:1:2: executing \"t\" at <mod 1 0>: error calling mod: runtime "
              "error: integer divide by zero");
}

TEST(TemplateSprig, IntegerArithmeticWrapsAroundAsInGo) {
    EXPECT_EQ(run(R"({{add1 9223372036854775807}}|{{sub -9223372036854775808 1}})"),
              std::string(kMin) + "|" + kMax);
    EXPECT_EQ(run(R"({{add 9223372036854775807 1}}|{{mul 4611686018427387904 2}}|)"
                  R"({{mul -9223372036854775808 -1}}|{{sub 0 -9223372036854775808}})"),
              std::string(kMin) + "|" + kMin + "|" + kMin + "|" + kMin);
}

TEST(TemplateSprig, FloatsOutsideInt64ConvertAsGoDoesOnAmd64) {
    // int64(f) of NaN, the infinities and anything out of range is MinInt64 there.
    EXPECT_EQ(run(R"({{int 1e19}}|{{int64 -1e19}}|{{int64 9223372036854775807.0}}|)"
                  R"({{int -9223372036854775808.0}}|{{int64 123.9}}|{{int64 -123.9}})"),
              std::string(kMin) + "|" + kMin + "|" + kMin + "|" + kMin + "|123|-123");
    EXPECT_EQ(run(R"({{int (float64 "NaN")}}|{{int64 (float64 "+Inf")}}|{{int (float64 "-Inf")}})"),
              std::string(kMin) + "|" + kMin + "|" + kMin);
    EXPECT_EQ(run(R"({{add1 1e300}}|{{max 1e300 5}}|{{min 1e300 5}})"),
              "-9223372036854775807|5|" + std::string(kMin));
    EXPECT_EQ(run(R"({{div 1e19 -1}})"), kMin);
}

TEST(TemplateSprig, AtoiGivesTheNearestBoundForNumbersOutOfRange) {
    // Sprig drops strconv.Atoi's error; the value that comes with a range error is the bound.
    EXPECT_EQ(run(R"({{atoi "99999999999999999999999"}}|{{atoi "-99999999999999999999999"}})"),
              std::string(kMax) + "|" + kMin);
    EXPECT_EQ(run(R"({{atoi "9223372036854775808"}}|{{atoi "-9223372036854775809"}}|)"
                  R"({{atoi "-9223372036854775808"}}|{{atoi "+12"}})"),
              std::string(kMax) + "|" + kMin + "|" + kMin + "|12");
    // strconv stops at the digit that overflows: a bad character after it is never seen.
    EXPECT_EQ(run(R"({{atoi "99999999999999999999x"}}|{{atoi "9999999999999999999x"}})"),
              std::string(kMax) + "|0");
    EXPECT_EQ(run(R"({{atoi ""}}|{{atoi "-"}}|{{atoi "1_000"}}|{{atoi "0x10"}}|{{atoi " 1"}})"),
              "0|0|0|0|0");
}

TEST(TemplateSprig, StringsBecomeIntegersAsCastReadsThem) {
    // cast: strconv.ParseInt(s, 0, 0) once a zero fraction is cut off; 0 on any error.
    EXPECT_EQ(run(R"({{int64 "12.000"}}|{{int "0x1F"}}|{{int "1_000"}}|{{int64 "0b_101"}}|)"
                  R"({{int "017"}}|{{add "10.0" 1}}|{{int "-0.0"}})"),
              "12|31|1000|5|15|11|0");
    EXPECT_EQ(run(R"({{int "99999999999999999999"}}|{{int64 "1.5"}}|{{int "1__0"}}|{{int "_1"}}|)"
                  R"({{int "1_"}}|{{int "."}}|{{int ".0"}}|{{int "1."}})"),
              "0|0|0|0|0|0|0|0");
    // toDecimal (ParseInt base 8): out of range is 0, however many digits follow.
    EXPECT_EQ(
        run(R"({{toDecimal "777777777777777777777"}}|{{toDecimal "-1000000000000000000000"}}|)"
            R"({{toDecimal "10000000000000000000001"}}|{{toDecimal "1000000000000000000000"}})"),
        std::string(kMax) + "|" + kMin + "|0|0");
}

TEST(TemplateSprig, StringsBecomeFloatsAsStrconvParseFloatReadsThem) {
    // The Go literal syntax and nothing else (no blanks, a hexadecimal mantissa only with its
    // 'p' exponent); out of range is 0, as cast gives it with ParseFloat's error.
    EXPECT_EQ(
        run(R"({{float64 " 1.5"}}|{{float64 "0x10"}}|{{float64 "0x1p4"}}|{{float64 "1_000.5"}}|)"
            R"({{float64 "1e400"}}|{{float64 "1e-400"}}|{{float64 "1__0"}}|{{float64 "1."}})"),
        "0|0|16|1000.5|0|0|0|1");
    EXPECT_EQ(
        run(R"x({{float64 "Infinity"}}|{{float64 "-inf"}}|{{float64 "NaN"}}|)x"
            R"x({{float64 "+nan"}}|{{float64 "nan(1)"}}|{{float64 "infin"}}|{{add1f " 2"}})x"),
        "+Inf|-Inf|NaN|0|0|0|1");
}

TEST(TemplateSprig, RangesWrapAroundAsInGoWithinTheListLimit) {
    // untilStep's i += step wraps: 1, then 1+MaxInt64 = MinInt64, then -1, then past the stop.
    EXPECT_EQ(run(R"({{untilStep 1 2 9223372036854775807}})"), std::string("[1 ") + kMin + " -1]");
    // seq's end+1 wraps to MinInt64: an empty count.
    EXPECT_EQ(run(R"({{seq 9223372036854775807}}|{{seq -9223372036854775808}}|)"
                  R"({{seq 9223372036854775806 9223372036854775807}})"),
              "||");
    // A count that wraps for ever stops at the list limit.
    t::Options few;
    few.max_steps = 5000;
    EXPECT_EQ(run(R"({{untilStep -1 -2 -9223372036854775808}})", "null", few),
              "ERROR: template: t:1:2: executing \"t\" at <untilStep -1 -2 -9223372036854775808>: "
              "error calling untilStep: untilStep: more than 5000 items");
    EXPECT_EQ(run(R"({{untilStep 9223372036854775806 9223372036854775807 2}})", "null", few),
              "ERROR: template: t:1:2: executing \"t\" at <untilStep 9223372036854775806 "
              "9223372036854775807 2>: error calling untilStep: untilStep: more than 5000 items");
    EXPECT_EQ(run(R"({{until -3}}|{{untilStep 3 0 -1}}|{{seq 3 -1 1}})"),
              "[0 -1 -2]|[3 2 1]|3 2 1");
}

TEST(TemplateSprig, AbbrevbothWithTheSmallestOffsetWrapsAsInGo) {
    // goutils' len(str)-offset wraps negative, so the offset moves to the end.
    EXPECT_EQ(run(R"({{abbrevboth -9223372036854775808 8 "hello world"}})"), "...world");
}

TEST(TemplateSprig, IndentCountsBeyondTheOutputLimitAreRefused) {
    // 2^62 spaces on each of 4 lines: the product must not wrap around past the check.
    EXPECT_EQ(run(R"({{indent 4611686018427387904 "\n\n\n"}})"),
              "ERROR: template: t:1:2: executing \"t\" at <indent 4611686018427387904 "
              "\"\\n\\n\\n\">: error calling indent: result exceeds 67108864 bytes");
}

} // namespace
