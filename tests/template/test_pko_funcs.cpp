// Package Operator's template functions (add_package_operator): the exact set, the Sprig functions
// beyond the first batch, and PKO's own (toYAML, fromYAML, b64decMap, getFile, getFileGlob, cel),
// against what Go's text/template with Sprig v3.3 and PKO print. Expected values come from Sprig's,
// xstrings', goutils' and PKO's own tests and documentation, or from Go's behaviour.
#include <gtest/gtest.h>

#include "kpkg/core/regex.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/template/template.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace t = kpkg::tmpl;

namespace {

const std::map<std::string, std::string> kFiles = {
    {"manifest.yaml", "kind: PackageManifest"},
    {"t.yaml", "t: v"},
    {"files/a.yaml", "a: 1"},
    {"files/b.yml", "b: 2"},
    {"files/deep/c.yaml", "c: 3"},
};

t::PackageHooks hooks() {
    t::PackageHooks h;
    h.file = [](std::string_view p) -> std::optional<std::string> {
        auto it = kFiles.find(std::string(p));
        if (it == kFiles.end()) return std::nullopt;
        return it->second;
    };
    h.paths = [] {
        std::vector<std::string> out;
        for (const auto& [p, _] : kFiles)
            out.push_back(p);
        return out;
    };
    h.cel = [](std::string_view e) -> bool {
        if (e == "true") return true;
        if (e == "false") return false;
        throw t::FuncError("compile error: ERROR: <input>:1:1: undeclared reference");
    };
    return h;
}

std::shared_ptr<const t::Funcs> funcs() {
    static auto f = [] {
        auto p = std::make_shared<t::Funcs>();
        t::add_package_operator(*p, hooks());
        return p;
    }();
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

bool has_error(const std::string& out, const std::string& part) {
    return out.starts_with("ERROR: ") && out.find(part) != std::string::npos;
}

// Package Operator's allow-list (internal/transform/transformfiles_funcs.go).
const char* const kAllowed =
    "hello abbrev abbrevboth trunc trim upper lower title untitle substr repeat trimAll "
    "trimSuffix trimPrefix nospace initials swapcase snakecase camelcase kebabcase wrap wrapWith "
    "contains hasPrefix hasSuffix quote squote cat indent nindent replace plural sha1sum "
    "sha256sum adler32sum toString atoi int64 int float64 seq toDecimal split splitList splitn "
    "toStrings until untilStep add1 add sub div mod mul add1f addf subf divf mulf biggest max min "
    "maxf minf ceil floor round join sortAlpha default empty coalesce all any compact mustCompact "
    "fromJson toJson toPrettyJson toRawJson mustFromJson mustToJson mustToPrettyJson "
    "mustToRawJson ternary deepCopy mustDeepCopy typeOf typeIs typeIsLike kindOf kindIs deepEqual "
    "base dir clean ext isAbs b64enc b64dec b32enc b32dec tuple list dict get set unset hasKey "
    "pluck keys pick omit merge mergeOverwrite mustMerge mustMergeOverwrite values append "
    "mustAppend push mustPush prepend mustPrepend first mustFirst rest mustRest last mustLast "
    "initial mustInitial reverse mustReverse uniq mustUniq without mustWithout has mustHas slice "
    "mustSlice concat dig chunk mustChunk semver semverCompare fail regexMatch mustRegexMatch "
    "regexFindAll mustRegexFindAll regexFind mustRegexFind regexReplaceAll mustRegexReplaceAll "
    "regexReplaceAllLiteral mustRegexReplaceAllLiteral regexSplit mustRegexSplit regexQuoteMeta "
    "urlParse urlJoin";

std::set<std::string> words(const std::string& s) {
    std::istringstream in(s);
    std::set<std::string> out;
    for (std::string w; in >> w;)
        out.insert(w);
    return out;
}

} // namespace

TEST(TemplatePkoFuncs, ExactlyPackageOperatorsSet) {
    auto allowed = words(kAllowed);
    EXPECT_EQ(allowed.size(), 164u);
    t::Funcs builtins;
    t::add_builtins(builtins);
    std::set<std::string> want = allowed;
    for (const auto& n : builtins.names())
        want.insert(n);
    for (const char* n :
         {"include", "toYAML", "fromYAML", "b64decMap", "getFile", "getFileGlob", "cel"})
        want.insert(n);
    auto got = funcs()->names();
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), want);
    // PKO's forbidden list (transformfiles_funcs_test.go)
    for (const char* n : {"ago", "date", "now", "toDate", "randAlphaNum", "randInt", "shuffle",
                          "bcrypt", "genPrivateKey", "encryptAES", "uuidv4", "env", "expandenv",
                          "getHostByName", "osBase", "osDir", "trimall"}) {
        EXPECT_FALSE(funcs()->has(n)) << n;
        EXPECT_EQ(run(std::string("{{ ") + n + " }}"),
                  std::string("PARSE: template: t:1: function \"") + n + "\" not defined");
    }
}

TEST(TemplatePkoFuncs, JsAndCallBuiltins) {
    // template.JSEscapeString
    EXPECT_EQ(run(R"({{js "a'b\"c\\d<e>&f=g\n\x01"}})"),
              R"(a\'b\"c\\d\u003Ce\u003E\u0026f\u003Dg\u000A\u0001)");
    EXPECT_EQ(run(R"({{js "é\u2028x"}}|{{js 1 "a"}})"), "é\\u2028x|1a");
    // call parses, and fails when run: there are no function values
    EXPECT_TRUE(has_error(run(R"({{call .}})", R"({"a": 1})"),
                          "error calling call: non-function of type map[string]interface {}"));
    EXPECT_TRUE(has_error(run(R"({{call nil}})"), "call of nil"));
}

TEST(TemplatePkoFuncs, GoutilsStrings) {
    EXPECT_EQ(run(R"({{abbrev 5 "hello world"}}|{{abbrev 3 "hello"}}|{{abbrev 20 "hello"}})"),
              "he...|hello|hello");
    EXPECT_EQ(run(R"({{abbrevboth 5 10 "1234 5678 9123"}}|{{abbrevboth 0 4 "abcdefg"}})"),
              "...5678...|a...");
    EXPECT_EQ(run(R"({{initials "First Try"}}|{{initials "  a  b c"}})"), "FT|abc");
    EXPECT_EQ(run(R"({{wrap 5 "Hello World"}}|{{wrapWith 5 "\t" "Hello World"}})"),
              "Hello\nWorld|Hello\tWorld");
    EXPECT_EQ(run(R"({{wrap 3 "abcdefgh ij"}}|{{wrapWith 3 "-" "abcdefgh ij"}})"),
              "abcdefgh\nij|abc-def-gh-ij");
    EXPECT_EQ(run(R"({{swapcase "This Is A.Test"}})"), "tHIS iS a.tEST");
    EXPECT_EQ(run(R"({{len "t" | plural "cheese" "%d chars"}}|{{plural "one" "many" 2}})"),
              "cheese|many");
    EXPECT_EQ(run(R"({{hello}})"), "Hello!");
}

TEST(TemplatePkoFuncs, XstringsCase) {
    const std::pair<const char*, const char*> snake[] = {
        {"FirstName", "first_name"},
        {"HTTPServer", "http_server"},
        {"NoHTTPS", "no_https"},
        {"GO_PATH", "go_path"},
        {"GO PATH", "go_path"},
        {"GO-PATH", "go_path"},
        {"http2xx", "http_2xx"},
        {"HTTP20xOK", "http_20x_ok"},
        {"Duration2m3s", "duration_2m3s"},
        {"Bld4Floor3rd", "bld4_floor_3rd"},
    };
    for (const auto& [in, want] : snake) {
        EXPECT_EQ(run(std::string("{{snakecase \"") + in + "\"}}"), want) << in;
        std::string kebab = want;
        std::replace(kebab.begin(), kebab.end(), '_', '-');
        EXPECT_EQ(run(std::string("{{kebabcase \"") + in + "\"}}"), kebab) << in;
    }
    const std::pair<const char*, const char*> pascal[] = {
        {"some_words", "SomeWords"}, {"http_server", "HttpServer"},
        {"no_https", "NoHttps"},     {"_complex__case_", "_Complex_Case_"},
        {"some words", "SomeWords"}, {"GOLANG_IS_GREAT", "GolangIsGreat"},
    };
    for (const auto& [in, want] : pascal)
        EXPECT_EQ(run(std::string("{{camelcase \"") + in + "\"}}"), want) << in;
}

TEST(TemplatePkoFuncs, HashesAndEncodings) {
    EXPECT_EQ(run(R"({{sha1sum "abc"}})"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    EXPECT_EQ(run(R"({{repeat 1000 "x" | sha1sum}})"), "c3efa690fa3fdd2e2526853eed670538ea127638");
    EXPECT_EQ(run(R"({{sha256sum "abc"}})"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(run(R"({{adler32sum "Wikipedia"}})"), "300286872");
    EXPECT_EQ(run(R"({{b32enc "coffee"}}|{{b32enc "a"}}|{{b32enc "abcde"}})"),
              "MNXWMZTFMU======|ME======|MFRGGZDF");
    EXPECT_EQ(run(R"({{b32dec "MNXWMZTFMU======"}}|{{b32dec "MFRGGZDF"}}|{{b32dec "!!!!!!!!"}})"),
              "coffee|abcde|illegal base32 data at input byte 0");
}

TEST(TemplatePkoFuncs, Conversions) {
    EXPECT_EQ(
        run(R"({{seq 0 1 3}}|{{seq 0 3 10}}|{{seq 3 3 2}}|{{seq 3 -3 2}}|{{seq}}|{{seq 0 4}})"),
        "0 1 2 3|0 3 6 9||3||0 1 2 3 4");
    EXPECT_EQ(run(R"({{seq 5}}|{{seq -5}}|{{seq 0}}|{{seq 0 1 2 3}}|{{seq 0 -4}})"),
              "1 2 3 4 5|1 0 -1 -2 -3 -4 -5|1 0||0 -1 -2 -3 -4");
    EXPECT_EQ(
        run(R"({{toDecimal "0777"}}|{{toDecimal 777}}|{{toDecimal "8"}}|{{toDecimal "-10"}})"),
        "511|511|0|-8");
    EXPECT_EQ(run(R"({{$v := "foo$bar$baz" | splitn "$" 2}}{{$v._0}}|{{$v._1}}|{{len $v}})"),
              "foo|bar$baz|2");
    EXPECT_EQ(run(R"({{list 1 .v 2 | toStrings}}|{{index (list 1 2 | toStrings) 1 | kindOf}})",
                  R"({"v": null})"),
              "[1 2]|string");
    EXPECT_EQ(run(R"({{untilStep 0 10 3}}|{{untilStep 3 0 -1}}|{{untilStep 0 3 -1}})"),
              "[0 3 6 9]|[3 2 1]|[]");
}

TEST(TemplatePkoFuncs, DecimalArithmetic) {
    // Exact decimals: 0.1 + 0.2 is 0.3, 1.1 * 3 is 3.3 (float64 would give 0.30000000000000004).
    EXPECT_EQ(run(R"({{addf 0.1 0.2}}|{{mulf 1.1 3}}|{{addf 1.5 2 2}}|{{add1f 1.5}})"),
              "0.3|3.3|5.5|2.5");
    EXPECT_EQ(run(R"({{subf 1.5 2 2}}|{{divf 10 4}}|{{divf 1 3}}|{{divf 2 3}}|{{mulf 1.5 2 2}})"),
              "-2.5|2.5|0.3333333333333333|0.6666666666666667|6");
    EXPECT_EQ(run(R"({{addf}}|{{subf 1e300 1e-300}}|{{mulf "2" true}})"), "0|1e+300|2");
    EXPECT_TRUE(has_error(run(R"({{divf 1 0}})"), "decimal division by zero"));
    EXPECT_EQ(run(R"({{maxf 1 2.5 -3}}|{{minf 1 2.5 -3}}|{{biggest 1 5 3}})"), "2.5|-3|5");
    EXPECT_EQ(run(R"({{ceil 1.2}}|{{floor 1.8}}|{{floor "-1.5"}}|{{ceil 3}})"), "2|1|-2|3");
    EXPECT_EQ(run(R"({{round 123.555555 3}}|{{round 123.5555 3 0.6}}|{{round 2.5 0}})"),
              "123.556|123.555|3");
}

TEST(TemplatePkoFuncs, DefaultsAndJson) {
    EXPECT_EQ(run(R"({{all 1 "a" true}}|{{all 1 ""}}|{{all}}|{{any 0 "" 1}}|{{any}})"),
              "true|false|true|true|false");
    EXPECT_EQ(run(R"({{$m := fromJson "{\"a\": 1, \"b\": [true, null]}"}}{{$m}}|{{typeOf $m.a}})"),
              "map[a:1 b:[true <nil>]]|float64");
    EXPECT_EQ(run(R"({{fromJson "nope"}}|{{fromJson "1 2"}})"), "<no value>|<no value>");
    EXPECT_TRUE(has_error(run(R"({{mustFromJson "nope"}})"), "error calling mustFromJson"));
    EXPECT_EQ(
        run(R"({{toPrettyJson .}})", R"({"a": 1, "b": [1, {"c": "x"}], "d": {}, "e": []})"),
        "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    {\n      \"c\": \"x\"\n    }\n  ],\n  \"d\": "
        "{},\n  \"e\": []\n}");
    EXPECT_EQ(run(R"({{toRawJson .}}|{{toJson .}})", R"({"a": "<b>&"})"),
              R"({"a":"<b>&"}|{"a":"\u003cb\u003e\u0026"})");
    EXPECT_EQ(run(R"({{mustToJson (list 1 "a" nil)}}|{{mustToRawJson 2.5}})"),
              R"([1,"a",null]|2.5)");
    EXPECT_EQ(run(R"({{$a := dict "x" (list 1)}}{{$b := deepCopy $a}}{{$_ := set $b "y" 2}})"
                  R"({{$a}}|{{$b}}|{{mustDeepCopy nil}})"),
              "map[x:[1]]|map[x:[1] y:2]|<no value>");
    // a map made to contain itself cannot be copied, only refused
    EXPECT_TRUE(has_error(run(R"({{$d := dict}}{{$_ := set $d "x" $d}}{{deepCopy $d}})"),
                          "nested too deeply"));
}

TEST(TemplatePkoFuncs, ReflectionAndPaths) {
    EXPECT_EQ(run(R"({{typeIsLike "int" 1}}|{{typeIsLike "string" 1}}|{{typeIsLike "float64" .}})",
                  "1.5"),
              "true|false|true");
    EXPECT_EQ(run(R"({{base "foo/bar.txt"}}|{{base ""}}|{{base "/"}}|{{base "a/b/"}})"),
              "bar.txt|.|/|b");
    EXPECT_EQ(run(R"({{dir "foo/bar.txt"}}|{{dir ""}}|{{dir "/a"}}|{{dir "a"}})"), "foo|.|/|.");
    EXPECT_EQ(
        run(R"({{clean "foo/../bar//baz/."}}|{{clean "/../a"}}|{{clean "../../x"}}|{{clean ""}})"),
        "bar/baz|/a|../../x|.");
    EXPECT_EQ(run(R"({{ext "a/b.tar.gz"}}|{{ext "a.b/c"}}|{{isAbs "/x"}}|{{isAbs "x"}})"),
              ".gz||true|false");
}

TEST(TemplatePkoFuncs, DataStructures) {
    EXPECT_EQ(run(R"({{tuple 1 "a"}}|{{pluck "a" (dict "a" 1) (dict "b" 2) (dict "a" 3)}})"),
              "[1 a]|[1 3]");
    // Sprig's documented example: merge keeps the destination's values, mergeOverwrite replaces
    // them (false included); both change and return the destination.
    const char* dst = R"({{$d := dict "default" "default" "overwrite" "me" "key" true}})";
    const char* src = R"({{$s := dict "overwrite" "overwritten" "key" false}})";
    EXPECT_EQ(run(std::string(dst) + src + "{{merge $d $s}}|{{$d}}"),
              "map[default:default key:true overwrite:me]|map[default:default key:true "
              "overwrite:me]");
    EXPECT_EQ(run(std::string(dst) + src + "{{mergeOverwrite $d $s}}"),
              "map[default:default key:false overwrite:overwritten]");
    // nested maps merge recursively; empty destination values are filled; nil sources skipped
    EXPECT_EQ(run(R"({{merge .a .b}})",
                  R"({"a": {"n": {"x": 1}, "e": "", "z": 0, "l": [1]},
                      "b": {"n": {"x": 2, "y": 3}, "e": "filled", "z": 5, "l": [2], "nil": null}})"),
              "map[e:filled l:[1] n:map[x:1 y:3] z:5]");
    EXPECT_EQ(run(R"({{mergeOverwrite .a .b}})",
                  R"({"a": {"n": {"x": 1}, "k": "v"}, "b": {"n": {"x": 2}, "k": null}})"),
              "map[k:<nil> n:map[x:2]]");
    EXPECT_EQ(run(R"({{without (list 1 2 3 4 3) 3}}|{{mustWithout (list "a" "b") "b" "a"}})"),
              "[1 2 4]|[]");
    EXPECT_EQ(
        run(R"({{concat (list 1 2) (list 3) (list)}}|{{chunk 2 (list 1 2 3 4 5)}}|{{chunk 3 (list)}})"),
        "[1 2 3]|[[1 2] [3 4] [5]]|[]");
    EXPECT_TRUE(has_error(run(R"({{concat (list 1) "x"}})"), "Cannot concat type string as list"));
    EXPECT_TRUE(has_error(run(R"({{mustChunk 0 (list 1)}})"), "error calling mustChunk"));
    EXPECT_EQ(
        run(R"({{mustFirst (list 1 2)}}|{{mustLast (list 1 2)}}|{{mustRest (list 1 2)}}|)"
            R"({{mustInitial (list 1 2)}}|{{mustReverse (list 1 2)}}|{{mustUniq (list 1 1)}}|)"
            R"({{mustHas 1 (list 1)}}|{{mustSlice (list 1 2 3) 1}}|{{mustAppend (list 1) 2}}|)"
            R"({{mustPush (list) 1}}|{{mustPrepend (list 1) 0}}|{{mustCompact (list 0 1 "")}})"),
        "1|2|[2]|[1]|[2 1]|[1]|true|[2 3]|[1 2]|[1]|[0 1]|[1]");
    EXPECT_TRUE(has_error(run(R"({{mustFirst "x"}})"), "Cannot find first on type string"));
}

TEST(TemplatePkoFuncs, Semver) {
    EXPECT_EQ(run(R"({{semverCompare "^1.2.0" "1.2.3"}}|{{semverCompare ">= 2" "1.0"}}|)"
                  R"({{semverCompare "~1.2" "v1.2.9"}}|{{semverCompare ">1.0.0" "1.5.0-rc.1"}})"),
              "true|false|true|false");
    EXPECT_TRUE(has_error(run(R"({{semverCompare "!!" "1.0.0"}})"), "error calling semverCompare"));
    EXPECT_TRUE(has_error(run(R"({{semverCompare "1.x" "one"}})"), "error calling semverCompare"));
    EXPECT_EQ(run(R"({{$v := semver "1.2.3-beta.1+b5"}}{{$v.Major}}.{{$v.Minor}}.{{$v.Patch}} )"
                  R"({{$v.Prerelease}} {{$v.Metadata}} {{$v.Original}})"),
              "1.2.3 beta.1 b5 1.2.3-beta.1+b5");
    EXPECT_TRUE(has_error(run(R"({{semver "x.y"}})"), "error calling semver"));
}

TEST(TemplatePkoFuncs, Regex) {
    EXPECT_EQ(
        run(R"({{regexMatch "[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}" "test@acme.com"}}|)"
            R"({{regexMatch "^[a-z]+$" "ab1"}}|{{regexMatch "(" "x"}})"),
        "true|false|false");
    EXPECT_TRUE(has_error(run(R"({{mustRegexMatch "(" "x"}})"),
                          "error parsing regexp: missing closing ): `(`"));
    EXPECT_EQ(
        run(R"({{regexFindAll "[1,3,5,7]" "123456789" -1}}|{{regexFindAll "a*" "baaab" -1 | len}}|)"
            R"({{regexFindAll "[0-9]" "1a2b3" 2}}|{{regexFindAll "x" "abc" -1}})"),
        "[1 3 5 7]|3|[1 2]|[]");
    EXPECT_EQ(run(R"({{regexFind "[a-zA-Z][1-9]" "abcd1234"}}|{{regexFind "z" "abc"}})"), "d1|");
    EXPECT_EQ(
        run(R"({{regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W"}}|)"
            R"({{regexReplaceAll "a(x*)b" "-ab-axxb-" "$1W"}}|)"
            R"({{regexReplaceAllLiteral "a(x*)b" "-ab-axxb-" "${1}"}}|)"
            R"({{regexReplaceAll "(?P<w>\\w+)@" "me@x" "<$w>"}}|{{regexReplaceAll "a*" "baaac" "-"}})"),
        "-W-xxW-|---|-${1}-${1}-|<me>x|-b-c-");
    EXPECT_EQ(run(R"({{regexSplit "z+" "pizza" -1}}|{{regexSplit "a*" "abaabaccadaaae" 5}}|)"
                  R"({{regexSplit "," "" -1 | len}}|{{regexSplit "," "a,b" 0 | len}})"),
              "[pi a]|[ b b c cadaaae]|1|0");
    EXPECT_EQ(run(R"({{regexQuoteMeta "1.2.3+[x]"}})"), R"(1\.2\.3\+\[x\])");
    // Sprig's non-must forms panic in regexp.MustCompile; text/template reports the panic
    EXPECT_TRUE(has_error(run(R"({{regexFind "a**" "x"}})"),
                          "error calling regexFind: regexp: Compile(`a**`): error parsing regexp: "
                          "invalid nested repetition operator: `**`"));
    EXPECT_TRUE(has_error(run(R"({{mustRegexFind "a**" "x"}})"),
                          "error calling mustRegexFind: error parsing regexp: invalid nested"));
    EXPECT_EQ(run(R"({{regexSplit "" "" -1 | len}}|{{regexSplit "" "ab" -1}})"), "0|[a b]");
    EXPECT_TRUE(has_error(run(R"({{regexReplaceAll "\\pL" "x" ""}})"), "not supported"));
    // Go syntax: (?i), \b, lazy repetition, non-capturing groups, POSIX classes, \Q..\E
    EXPECT_EQ(
        run(R"({{regexFindAll "(?i)hello" "HeLLo hello" -1}}|{{regexFindAll "\\bfoo\\b" "foo foobar foo" -1}}|)"
            R"({{regexFind "<.+?>" "<a><b>"}}|{{regexFind "(?:ab)+" "xababy"}}|)"
            R"({{regexFind "[[:digit:]]+" "ab123"}}|{{regexFind "\\Qa.b\\E" "axb a.b"}})"),
        "[HeLLo hello]|[foo foo]|<a>|abab|123|a.b");
    // leftmost-first, not leftmost-longest
    EXPECT_EQ(run(R"T({{regexFind "a|ab" "ab"}}|{{regexFind "(a|ab)(c|bcd)" "abcd"}})T"), "a|abcd");
    // $ is the end of the text unless (?m)
    EXPECT_EQ(run(R"({{regexFindAll "x$" "x\nx" -1}}|{{regexFindAll "(?m)x$" "x\nx" -1}})"),
              "[x]|[x x]");
}

TEST(TemplatePkoFuncs, RegexHostileInputStaysLinear) {
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(run(R"({{regexMatch "(a*)*b" (repeat 100000 "a")}}|)"
                  R"({{regexMatch "(a|a)*(a|aa)*(a?){20}c" (repeat 100000 "a")}}|)"
                  R"({{regexReplaceAll "(x+x+)+y" (repeat 20000 "x") "-" | len}})"),
              "false|false|20000");
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    EXPECT_LT(ms, 10000) << "a backtracking engine takes forever here";
    // Deep nesting and huge repetitions are refused when compiling, without deep recursion.
    EXPECT_TRUE(has_error(
        run(R"T({{mustRegexMatch (printf "%s%s" (repeat 5000 "(") (repeat 5000 ")")) "x"}})T"),
        "expression nests too deeply"));
    // Repeated searches that would go quadratic (each FindAll search scans to the end before
    // settling for the short match) stop at the step budget instead of running for minutes.
    start = std::chrono::steady_clock::now();
    EXPECT_TRUE(has_error(run(R"T({{regexFindAll "(a+)c|a" (repeat 200000 "a") -1 | len}})T"),
                          "error calling regexFindAll: regexp: matching takes too many steps"));
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count(),
              10000);
    // a replacement cannot grow the output beyond the limit
    t::Options small;
    small.max_output = 1000;
    EXPECT_TRUE(
        has_error(run(R"({{regexReplaceAll "" (repeat 100 "a") (repeat 100 "b")}})", "null", small),
                  "exceeds 1000 bytes"));
    EXPECT_TRUE(has_error(run(R"({{untilStep 0 100000000 1 | len}})"), "more than 1048576 items"));
    EXPECT_TRUE(has_error(run(R"({{seq 100000000}})"), "more than 1048576 items"));
    EXPECT_TRUE(has_error(run(R"({{until 100000000 | len}})"), "over the limit of 1048576"));
    // (with a lower step limit, which caps lists too, to keep the test quick)
    t::Options few;
    few.max_steps = 5000;
    EXPECT_TRUE(has_error(run(R"({{regexFindAll "." (repeat 20000 "a") -1 | len}})", "null", few),
                          "regexFindAll: more than 5000 items"));
    EXPECT_EQ(run(R"({{regexFindAll "." (repeat 20000 "a") 5 | len}})", "null", few), "5");
    EXPECT_EQ(run(R"({{regexFindAll "." (repeat 5000 "a") -1 | len}})", "null", few), "5000");
    EXPECT_TRUE(has_error(run(R"({{regexSplit "" (repeat 20000 "a") -1 | len}})", "null", few),
                          "regexSplit: more than 5000 items"));
    EXPECT_TRUE(has_error(run(R"({{splitn "" -1 (repeat 20000 "a") | len}})", "null", few),
                          "splitn: more than 5000 items"));
    EXPECT_TRUE(
        has_error(run(R"({{mustRegexFind "((a{100}){100}){100}" "a"}})"), "expression too large"));
}

// One budget for the regular-expression work of a set's executions (one package render).
TEST(TemplatePkoFuncs, RegexBudgetIsSharedBySearchesAndExecutions) {
    // A template: the searches of every call, in a loop, count together.
    t::Options o;
    o.max_regex_steps = 100'000;
    const std::string loop =
        R"({{range until (int .n)}}{{if regexMatch "^(a|b)*c$" (repeat 2000 "a")}}x{{end}}{{end}}ok)";
    EXPECT_EQ(run(loop, R"({"n": 2})", o), "ok");
    const std::string many = run(loop, R"({"n": 1000})", o);
    EXPECT_TRUE(has_error(many, "template: t:1:")) << many;
    EXPECT_TRUE(has_error(many, "error calling regexMatch: regexp: matching takes too many steps: "
                                "more than 100000 in all"))
        << many;

    // Every execution of one set draws on the same budget (one render of a package's files).
    t::Set set(funcs(), o);
    ASSERT_TRUE(set.parse("a", R"({{regexReplaceAll "(a|b)*c" (repeat 8000 "a") "x" | len}})"));
    ASSERT_TRUE(set.parse("b", R"({{regexFind "(a|b)*c" (repeat 8000 "a")}})"));
    auto a = set.execute("a", t::Value());
    ASSERT_TRUE(a.ok()) << a.error().message;
    EXPECT_EQ(*a, "8000");
    auto second = set.execute("b", t::Value());
    ASSERT_FALSE(second.ok());
    EXPECT_TRUE(second.error().message.starts_with("template: b:1:")) << second.error().message;
    EXPECT_NE(second.error().message.find("at <regexFind"), std::string::npos)
        << second.error().message;
    EXPECT_LT(set.regex_budget()->left, 100'000u);

    // Each function that matches draws on it.
    t::Options tiny;
    tiny.max_regex_steps = 20;
    const std::string s40(40, 'b');
    for (const std::string& call :
         {"regexMatch \"a\" \"" + s40 + "\"", "mustRegexMatch \"a\" \"" + s40 + "\"",
          "regexFind \"a\" \"" + s40 + "\"", "regexFindAll \"a\" \"" + s40 + "\" -1",
          "regexReplaceAll \"a\" \"" + s40 + "\" \"x\"",
          "regexReplaceAllLiteral \"a\" \"" + s40 + "\" \"x\"",
          "regexSplit \"a\" \"" + s40 + "\" -1", std::string("getFileGlob \"files/**/c.yaml\"")}) {
        const std::string out = run("{{" + call + "}}", "null", tiny);
        EXPECT_TRUE(has_error(out, "regexp: matching takes too many steps: more than 20 in all"))
            << call << ": " << out;
    }
}

TEST(TemplatePkoFuncs, Urls) {
    EXPECT_EQ(
        run(R"({{$u := urlParse "http://admin:secret@server.com:8080/api?list=false#anchor"}})"
            R"({{$u.scheme}}|{{$u.host}}|{{$u.hostname}}|{{$u.path}}|{{$u.query}}|{{$u.opaque}}|)"
            R"({{$u.fragment}}|{{$u.userinfo}})"),
        "http|server.com:8080|server.com|/api|list=false||anchor|admin:secret");
    EXPECT_EQ(run(R"({{(urlParse "mailto:a@b.c").opaque}}|{{(urlParse "/a%20b").path}}|)"
                  R"({{(urlParse "http://[::1]:80/").hostname}})"),
              "a@b.c|/a b|::1");
    EXPECT_TRUE(has_error(
        run(R"({{urlParse "http://a b.com/"}})"),
        "unable to parse url: parse \"http://a b.com/\": invalid character \" \" in host name"));
    EXPECT_TRUE(has_error(run(R"({{urlParse ":x"}})"), "missing protocol scheme"));
    EXPECT_EQ(
        run(R"({{urlJoin (dict "fragment" "fragment" "host" "host:80" "path" "/path" "query" "query" "scheme" "http")}})"),
        "http://host:80/path?query#fragment");
    EXPECT_EQ(
        run(R"({{urlJoin (dict "host" "h" "path" "a b" "userinfo" "me:p@ss" "scheme" "https")}}|)"
            R"({{urlJoin (dict "scheme" "mailto" "opaque" "x@y")}}|{{urlJoin (dict "path" "a:b")}})"),
        "https://me:p%40ss@h/a%20b|mailto:x@y|./a:b");
    EXPECT_TRUE(has_error(run(R"({{urlJoin (dict "host" 1)}})"),
                          "interface conversion: interface {} is int, not string"));
}

TEST(TemplatePkoFuncs, ToYaml) {
    EXPECT_EQ(run(R"({{toYAML (dict "t" "2")}})"), R"(t: "2")"); // PKO's own test
    EXPECT_EQ(run(R"({{toYAML .}})", R"({"b": [1, "x", true, null], "a": {"c": 1.5}, "d": "yes"})"),
              "a:\n  c: 1.5\nb:\n- 1\n- x\n- true\n- null\nd: \"yes\"");
    // yaml.v2 ends a document whose root is a plain scalar with "...": PKO trims only the newline
    EXPECT_EQ(run(R"({{toYAML nil}}|{{toYAML 3}}|{{toYAML (list)}})"), "null\n...|3\n...|[]");
    EXPECT_EQ(run(R"({{toYAML .}})", R"({"s": "line1\nline2"})"), "s: |-\n  line1\n  line2");
    EXPECT_TRUE(has_error(run(R"({{$d := dict}}{{$_ := set $d "x" $d}}{{toYAML $d}})"),
                          "error calling toYAML"));
}

TEST(TemplatePkoFuncs, FromYaml) {
    EXPECT_EQ(run(R"({{fromYAML "t: \"2\""}})"), "map[t:2]"); // PKO's own test
    EXPECT_EQ(
        run(R"({{$m := fromYAML "a: 1\nb: [yes, ~, 0x10]\nc: {d: e}"}}{{$m}}|{{typeOf $m.a}})"),
        "map[a:1 b:[true <nil> 16] c:map[d:e]]|float64");
    EXPECT_EQ(run(R"({{fromYAML "- 1\n- two"}}|{{fromYAML ""}}|{{fromYAML "a: 1\n---\nb: 2"}})"),
              "[1 two]|<no value>|map[a:1]");
    EXPECT_TRUE(has_error(run(R"({{fromYAML "a: [1"}})"),
                          "error calling fromYAML: error converting YAML to JSON"));
    EXPECT_TRUE(has_error(run(R"({{fromYAML 1}})"),
                          "fromYAML requires string or []byte as input: invalid type"));
    EXPECT_TRUE(has_error(run(R"({{fromYAML "a: .inf"}})"), "error calling fromYAML"));
    // hostile: deep nesting is refused, not a stack overflow
    EXPECT_TRUE(
        has_error(run(R"({{fromYAML (printf "%s%s" (repeat 100000 "[") (repeat 100000 "]"))}})"),
                  "error calling fromYAML"));
    EXPECT_EQ(run(R"({{toYAML (fromYAML "b: 1\na: [x]")}})"), "a:\n- x\nb: 1");
}

TEST(TemplatePkoFuncs, B64decMap) {
    EXPECT_EQ(run(R"({{b64decMap .}})", R"({"test": "YWJjZGVm", "n": 1, "e": ""})"),
              "map[e: test:abcdef]");
    EXPECT_TRUE(has_error(run(R"({{b64decMap .}})", R"({"ok": "YQ==", "bad": "YQ"})"),
                          "error calling b64decMap: decode base64 value at key bad: illegal base64 "
                          "data at input byte 0"));
    EXPECT_TRUE(has_error(run(R"({{b64decMap "x"}})"), "expected map[string]interface {}"));
}

TEST(TemplatePkoFuncs, FilesAndCel) {
    EXPECT_EQ(run(R"({{getFile "t.yaml"}}|{{getFile "files/a.yaml" | fromYAML}})"),
              "t: v|map[a:1]");
    EXPECT_EQ(run(R"({{getFile "nope.yaml"}})"),
              "ERROR: template: t:1:2: executing \"t\" at <getFile \"nope.yaml\">: error calling "
              "getFile: file not found");
    // gobwas/glob with '/': ** crosses directories, * does not (PKO's own test uses **.yaml)
    EXPECT_EQ(run(R"({{getFileGlob "**.yaml" | keys}})"),
              "[files/a.yaml files/deep/c.yaml manifest.yaml t.yaml]");
    EXPECT_EQ(
        run(R"({{getFileGlob "*.yaml" | keys}}|{{getFileGlob "files/*" | keys}}|)"
            R"({{getFileGlob "files/*.{yaml,yml}" | keys}}|{{getFileGlob "files/[!a]*" | keys}}|)"
            R"({{getFileGlob "?.yaml"}})"),
        "[manifest.yaml t.yaml]|[files/a.yaml files/b.yml]|[files/a.yaml files/b.yml]|"
        "[files/b.yml]|map[t.yaml:t: v]");
    EXPECT_EQ(run(R"({{getFileGlob "none/**" | len}})"), "0");
    EXPECT_TRUE(has_error(run(R"({{getFileGlob "files/[a"}})"), "error calling getFileGlob"));
    EXPECT_EQ(run(R"({{if cel "true"}}on{{end}}{{if cel "false"}}off{{end}})"), "on");
    EXPECT_TRUE(has_error(run(R"({{cel "x"}})"), "error calling cel: compile error"));
}

TEST(TemplatePkoFuncs, MissingHooksFailWhenCalled) {
    auto f = std::make_shared<t::Funcs>();
    t::add_package_operator(*f, {});
    t::Set set(f);
    ASSERT_TRUE(set.parse("t", R"({{getFile "a"}})"));
    auto r = set.execute("t", {});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("file not found"), std::string::npos);
    ASSERT_TRUE(set.parse("c", R"({{cel "true"}})"));
    EXPECT_FALSE(set.execute("c", {}));
    ASSERT_TRUE(set.parse("g", R"({{getFileGlob "**" | len}})"));
    EXPECT_EQ(*set.execute("g", {}), "0");
}
