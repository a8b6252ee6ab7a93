// kpkg's text/template: lexing and parsing (with Go's error messages), execution (trimming,
// control structures, variables, define/template/block across files, Go's comparison and
// printing rules), execution errors with positions, and the limits.
#include <gtest/gtest.h>

#include "kpkg/io/load.hpp"
#include "kpkg/template/template.hpp"

#include "../../src/template/internal.hpp"

#include <string>

namespace t = kpkg::tmpl;
using t::Value;

namespace {

std::shared_ptr<const t::Funcs> builtins() {
    auto f = std::make_shared<t::Funcs>();
    t::add_builtins(*f);
    return f;
}

Value json(const std::string& text) {
    auto docs = kpkg::io::parse_json(text, "test").take();
    return t::from_json(docs.at(0).root);
}

// Parses `text` as template "t" and executes it with `data`; the output or "ERROR: message".
std::string run(const std::string& text, const Value& data = {}, t::Options opt = {}) {
    t::Set set(builtins(), opt);
    auto p = set.parse("t", text);
    if (!p) return "PARSE: " + p.error().message;
    auto r = set.execute("t", data);
    if (!r) return "ERROR: " + r.error().message;
    return *r;
}
std::string runj(const std::string& text, const std::string& data) {
    return run(text, json(data));
}

// ------------------------------------------------------------------------------------------------
// Lexer

TEST(TemplateLex, TextAndActions) {
    auto toks = t::lex("a {{ .x | printf \"%d\" }} b");
    ASSERT_EQ(toks.size(), 14u);
    EXPECT_EQ(toks[0].type, t::Tok::text);
    EXPECT_EQ(toks[0].val, "a ");
    EXPECT_EQ(toks[1].type, t::Tok::left);
    EXPECT_EQ(toks[3].type, t::Tok::field);
    EXPECT_EQ(toks[3].val, ".x");
    EXPECT_EQ(toks[5].type, t::Tok::pipe);
    EXPECT_EQ(toks[7].type, t::Tok::identifier);
    EXPECT_EQ(toks[9].type, t::Tok::string);
    EXPECT_EQ(toks[9].val, "\"%d\"");
    EXPECT_EQ(toks[11].type, t::Tok::right);
    EXPECT_EQ(toks[12].type, t::Tok::text);
    EXPECT_EQ(toks[12].val, " b");
    EXPECT_EQ(toks.back().type, t::Tok::eof);
}

TEST(TemplateLex, TrimMarkersAndComments) {
    auto toks = t::lex("a  \n{{- 3 -}}\n\t b{{/* c */}}c{{- /* d */ -}}  d");
    std::vector<std::string> texts;
    for (const auto& tk : toks)
        if (tk.type == t::Tok::text) texts.push_back(tk.val);
    EXPECT_EQ(texts, (std::vector<std::string>{"a", "b", "c", "d"}));
    // "{{-3}}" is the number -3, not a trim marker.
    auto n = t::lex("{{-3}}");
    EXPECT_EQ(n[1].type, t::Tok::number);
    EXPECT_EQ(n[1].val, "-3");
}

TEST(TemplateLex, Keywords) {
    auto toks = t::lex("{{if true}}{{else}}{{end}}{{range $i, $v := .}}{{break}}{{end}}");
    std::vector<t::Tok> types;
    for (const auto& tk : toks)
        if (tk.type != t::Tok::space && tk.type != t::Tok::left && tk.type != t::Tok::right)
            types.push_back(tk.type);
    std::vector<t::Tok> want = {
        t::Tok::kw_if,    t::Tok::boolean, t::Tok::kw_else,  t::Tok::kw_end,  t::Tok::kw_range,
        t::Tok::variable, t::Tok::comma,   t::Tok::variable, t::Tok::declare, t::Tok::dot,
        t::Tok::kw_break, t::Tok::kw_end,  t::Tok::eof};
    EXPECT_EQ(types, want);
}

TEST(TemplateLex, Errors) {
    auto last = [](const std::string& s) { return t::lex(s).back().val; };
    EXPECT_EQ(last("{{ .x "), "unclosed action");
    EXPECT_EQ(last("{{ \"abc }}"), "unterminated quoted string");
    EXPECT_EQ(last("{{ `abc }}"), "unterminated raw quoted string");
    EXPECT_EQ(last("{{/* x "), "unclosed comment");
    EXPECT_EQ(last("{{/* x */ .}}"), "comment ends before closing delimiter");
    EXPECT_EQ(last("{{ (.x }}"), "unclosed left paren");
    EXPECT_EQ(last("{{ .x) }}"), "unexpected right paren");
    EXPECT_EQ(last("{{ 3k }}"), "bad number syntax: \"3k\"");
    EXPECT_EQ(last("{{ .a# }}"), "bad character U+0023 '#'");
    EXPECT_EQ(last("{{ a : b }}"), "expected :=");
}

// ------------------------------------------------------------------------------------------------
// Parser

std::string parse_error(const std::string& text) {
    t::Set set(builtins());
    auto p = set.parse("t.gotmpl", text);
    return p ? "ok" : p.error().message;
}

TEST(TemplateParse, GoMessages) {
    EXPECT_EQ(parse_error("{{if .}}x"), "template: t.gotmpl:1: unexpected EOF");
    EXPECT_EQ(parse_error("a\n{{end}}"), "template: t.gotmpl:2: unexpected {{end}}");
    EXPECT_EQ(parse_error("{{else}}"), "template: t.gotmpl:1: unexpected {{else}}");
    EXPECT_EQ(parse_error("{{$x}}"), "template: t.gotmpl:1: undefined variable \"$x\"");
    EXPECT_EQ(parse_error("\n\n{{foo 1}}"), "template: t.gotmpl:3: function \"foo\" not defined");
    EXPECT_EQ(parse_error("{{if}}{{end}}"), "template: t.gotmpl:1: missing value for if");
    EXPECT_EQ(parse_error("{{}}"), "template: t.gotmpl:1: missing value for command");
    EXPECT_EQ(parse_error("{{break}}"), "template: t.gotmpl:1: {{break}} outside {{range}}");
    EXPECT_EQ(parse_error("{{continue}}"), "template: t.gotmpl:1: {{continue}} outside {{range}}");
    EXPECT_EQ(parse_error("{{.x | 3}}"),
              "template: t.gotmpl:1: non executable command in pipeline stage 2");
    EXPECT_EQ(parse_error("{{\"a\".x}}"),
              "template: t.gotmpl:1: unexpected . after term \"\\\"a\\\"\"");
    EXPECT_EQ(parse_error("{{template .x}}"),
              "template: t.gotmpl:1: unexpected \".x\" in template clause");
    EXPECT_EQ(parse_error("{{define \"a\"}}1{{end}}{{define \"a\"}}2{{end}}"),
              "template: t.gotmpl:1: template: multiple definition of template \"a\"");
    EXPECT_EQ(parse_error("{{with $x, $y := .}}{{end}}"),
              "template: t.gotmpl:1: too many declarations in with");
    EXPECT_EQ(parse_error("{{ .x \"a\"b }}"), "template: t.gotmpl:1: unexpected \"b\" in operand");
    EXPECT_EQ(parse_error("{{template}}"),
              "template: t.gotmpl:1: unexpected \"}}\" in template clause");
    EXPECT_EQ(parse_error("{{define \"x\" 1}}{{end}}"),
              "template: t.gotmpl:1: unexpected \"1\" in define clause");
    EXPECT_EQ(parse_error("{{.x .}}{{ 1 . }}{{if}}"), "template: t.gotmpl:1: missing value for if");
    EXPECT_EQ(parse_error("{{(1 .)nil}}"), "template: t.gotmpl:1: unexpected <nil> in operand");
    EXPECT_EQ(parse_error("{{ 0x1G }}"), "template: t.gotmpl:1: bad number syntax: \"0x1G\"");
    EXPECT_EQ(parse_error("x\n{{ .a\n }}\n{{ \"b }}"),
              "template: t.gotmpl:4: unterminated quoted string");
    EXPECT_EQ(parse_error("{{define \"a\"}}{{define \"b\"}}{{end}}{{end}}"),
              "template: t.gotmpl:1: unexpected <define> in command");
    EXPECT_EQ(parse_error("{{if .}}{{else}}{{else}}{{end}}"),
              "template: t.gotmpl:1: expected end; found {{else}}");
}

TEST(TemplateParse, VariablesScopedToControls) {
    EXPECT_EQ(parse_error("{{if .}}{{$x := 1}}{{end}}{{$x}}"),
              "template: t.gotmpl:1: undefined variable \"$x\"");
    EXPECT_EQ(parse_error("{{with $x := .}}{{$x}}{{else}}{{$x}}{{end}}"), "ok");
    EXPECT_EQ(parse_error("{{$x := 1}}{{define \"a\"}}{{$x}}{{end}}"),
              "template: t.gotmpl:1: undefined variable \"$x\"");
}

TEST(TemplateParse, NodeStrings) {
    t::Set set(builtins());
    ASSERT_TRUE(set.parse("t", "{{$x := .a.b | printf \"%v\" (len $x.c) 1.5 nil true}}"));
    const auto* tree = set.find("t");
    ASSERT_NE(tree, nullptr);
    EXPECT_EQ(tree->root->kids[0]->str(), "{{$x := .a.b | printf \"%v\" (len $x.c) 1.5 nil true}}");
}

TEST(TemplateParse, Numbers) {
    EXPECT_EQ(run("{{0x1F}} {{0o17}} {{017}} {{0b101}} {{1_000}} {{-7}} {{+3}}"),
              "31 15 15 5 1000 -7 3");
    EXPECT_EQ(run("{{1.5}} {{1e3}} {{.5}} {{1e6}} {{'a'}} {{'\\n'}} {{'é'}}"),
              "1.5 1000 0.5 1e+06 97 10 233");
    EXPECT_EQ(run("{{printf \"%T %T %T\" 1 1.0 'x'}}"), "int float64 int");
    EXPECT_EQ(run("{{\"a\\tb\\u00e9\\x41\\101\"}}|{{`raw\\n`}}"), "a\tbéAA|raw\\n");
    EXPECT_EQ(run("{{ - }}"), "PARSE: template: t:1: illegal number syntax: \"-\"");
    EXPECT_EQ(run("{{9223372036854775807}} {{-9223372036854775808}}"),
              "9223372036854775807 -9223372036854775808");
    EXPECT_EQ(run("{{ 9223372036854775808 }}"),
              "ERROR: template: t:1:3: executing \"t\" at <9223372036854775808>: "
              "9223372036854775808 overflows int");
    EXPECT_EQ(run("{{ 99999999999999999999 }}"),
              "PARSE: template: t:1: integer overflow: \"99999999999999999999\"");
    EXPECT_EQ(run("{{ -9223372036854775809 }}"),
              "PARSE: template: t:1: integer overflow: \"-9223372036854775809\"");
}

// ------------------------------------------------------------------------------------------------
// Execution

TEST(TemplateExec, TextAndTrimming) {
    EXPECT_EQ(run("plain text"), "plain text");
    EXPECT_EQ(run(""), "");
    EXPECT_EQ(run("a  {{- \"b\" -}}  \n c"), "abc");
    EXPECT_EQ(run("a \n{{- /* comment */ -}}\n b"), "ab");
    EXPECT_EQ(run("a {{/* comment */}} b"), "a  b");
    EXPECT_EQ(run("x\n{{- if true }}\n  y\n{{- end }}\nz"), "x\n  y\nz");
    EXPECT_EQ(run("{{- 1 -}}"), "1");
}

TEST(TemplateExec, FieldsAndPrinting) {
    const std::string data =
        R"({"a": {"b": "x", "n": 3, "f": 1.5, "big": 1000000, "t": true, "z": null,
            "l": [1, "two", null, {"k": "v"}], "m": {"b": 2, "a": [1]}}})";
    EXPECT_EQ(runj("{{.a.b}} {{.a.n}} {{.a.f}} {{.a.big}} {{.a.t}} {{.a.z}}", data),
              "x 3 1.5 1e+06 true <no value>");
    EXPECT_EQ(runj("{{.a.l}}", data), "[1 two <nil> map[k:v]]");
    EXPECT_EQ(runj("{{.a.m}}", data), "map[a:[1] b:2]");
    EXPECT_EQ(runj("{{$.a.b}} {{$x := .a}}{{$x.m.b}} {{(.a.m).b}}", data), "x 2 2");
    EXPECT_EQ(runj("{{with .a}}{{.b}}{{end}}", data), "x");
    EXPECT_EQ(run("{{.}}", Value::string("s")), "s");
    EXPECT_EQ(run("{{.}}"), "<no value>");
}

TEST(TemplateExec, MissingKeyIsAnErrorWithPosition) {
    EXPECT_EQ(runj("{{.a.y}}", R"({"a": {"b": 1}})"),
              "ERROR: template: t:1:2: executing \"t\" at <.a.y>: map has no entry for key \"y\"");
    EXPECT_EQ(runj("line1\n  {{ .x }}", R"({})"),
              "ERROR: template: t:2:5: executing \"t\" at <.x>: map has no entry for key \"x\"");
    EXPECT_EQ(runj("{{.a.b.c}}", R"({"a": {"b": null}})"),
              "ERROR: template: t:1:2: executing \"t\" at <.a.b.c>: nil pointer evaluating "
              "interface {}.c");
    EXPECT_EQ(runj("{{.a.x}}", R"({"a": "s"})"),
              "ERROR: template: t:1:2: executing \"t\" at <.a.x>: can't evaluate field x in type "
              "string");
    t::Options lax;
    lax.missing_key_error = false;
    EXPECT_EQ(run("{{.x}}", json("{}"), lax), "<no value>");
    // index never fails on a missing key
    EXPECT_EQ(runj("{{index . \"nope\"}}", "{}"), "<no value>");
}

TEST(TemplateExec, IfElseTruthiness) {
    const std::string data =
        R"({"e": {}, "l": [], "s": "", "z": 0, "f": false, "n": null, "m": {"a": 1}, "one": 1})";
    for (const char* k : {"e", "l", "s", "z", "f", "n"})
        EXPECT_EQ(runj(std::string("{{if .") + k + "}}T{{else}}F{{end}}", data), "F") << k;
    for (const char* k : {"m", "one"})
        EXPECT_EQ(runj(std::string("{{if .") + k + "}}T{{else}}F{{end}}", data), "T") << k;
    EXPECT_EQ(runj("{{if .z}}a{{else if .s}}b{{else if .one}}c{{else}}d{{end}}", data), "c");
    EXPECT_EQ(runj("{{with .e}}a{{else with .m}}{{.a}}{{else}}d{{end}}", data), "1");
    EXPECT_EQ(runj("{{with .e}}a{{else}}{{.one}}{{end}}", data), "1");
}

TEST(TemplateExec, Range) {
    const std::string data = R"({"l": ["a", "b", "c"], "m": {"z": 1, "a": 2, "m": 3}, "e": []})";
    EXPECT_EQ(runj("{{range .l}}[{{.}}]{{end}}", data), "[a][b][c]");
    EXPECT_EQ(runj("{{range $i, $v := .l}}{{$i}}={{$v}} {{end}}", data), "0=a 1=b 2=c ");
    EXPECT_EQ(runj("{{range $k, $v := .m}}{{$k}}:{{$v}},{{end}}", data), "a:2,m:3,z:1,");
    EXPECT_EQ(runj("{{range $v := .m}}{{$v}}{{end}}", data), "231");
    EXPECT_EQ(runj("{{range .e}}x{{else}}empty{{end}}", data), "empty");
    EXPECT_EQ(runj("{{range .l}}{{if eq . \"b\"}}{{continue}}{{end}}{{.}}{{end}}", data), "ac");
    EXPECT_EQ(runj("{{range .l}}{{if eq . \"b\"}}{{break}}{{end}}{{.}}{{end}}", data), "a");
    EXPECT_EQ(run("{{range 3}}{{.}}{{end}}|{{range $i := 2}}{{$i}}{{end}}|{{range "
                  "0}}{{else}}none{{end}}"),
              "012|01|none");
    EXPECT_EQ(runj("{{range .l}}{{$.m.a}}{{end}}", data), "222");
    EXPECT_EQ(run("{{range true}}{{end}}"),
              "ERROR: template: t:1:8: executing \"t\" at <{{range true}}{{end}}>: range can't "
              "iterate over true");
}

TEST(TemplateExec, Variables) {
    EXPECT_EQ(run("{{$x := 1}}{{$x = 2}}{{$x}}"), "2");
    EXPECT_EQ(run("{{$x := 1}}{{if true}}{{$x = 2}}{{$y := 3}}{{end}}{{$x}}"), "2");
    EXPECT_EQ(runj("{{$n := 0}}{{range .}}{{$n = .}}{{end}}{{$n}}", "[1, 2, 5]"), "5");
    EXPECT_EQ(run("{{$x := \"a\" | printf \"%s-%s\" \"b\"}}{{$x}}"), "b-a");
}

TEST(TemplateExec, DefineTemplateBlockAcrossFiles) {
    t::Set set(builtins());
    ASSERT_TRUE(set.parse("_helpers.tpl", "{{define \"name\"}}app-{{.}}{{end}}\n"));
    ASSERT_TRUE(set.parse("main.gotmpl",
                          "{{template \"name\" \"x\"}} {{block \"b\" .}}dflt {{.}}{{end}}|"
                          "{{template \"name\"}}"));
    EXPECT_EQ(set.names(), (std::vector<std::string>{"_helpers.tpl", "b", "main.gotmpl", "name"}));
    EXPECT_EQ(*set.execute("main.gotmpl", Value::string("d")), "app-x dflt d|app-<no value>");
    // A later file redefines a block; an empty redefinition does not replace.
    ASSERT_TRUE(
        set.parse("override", "{{define \"b\"}}new {{.}}{{end}}{{define \"name\"}} {{end}}"));
    EXPECT_EQ(*set.execute("main.gotmpl", Value::string("d")), "app-x new d|app-<no value>");
    EXPECT_EQ(run("{{template \"nope\"}}"),
              "ERROR: template: t:1:11: executing \"t\" at <{{template \"nope\"}}>: template "
              "\"nope\" not defined");
    EXPECT_EQ(set.execute("other", Value()).error().message,
              "template: no template \"other\" associated with template \"_helpers.tpl\"");
    // Positions inside a define name the file and the define.
    t::Set s2(builtins());
    ASSERT_TRUE(s2.parse("f.gotmpl", "{{define \"d\"}}\n  {{.a}}{{end}}{{template \"d\" .}}"));
    EXPECT_EQ(s2.execute("f.gotmpl", json("{}")).error().message,
              "template: f.gotmpl:2:4: executing \"d\" at <.a>: map has no entry for key \"a\"");
}

TEST(TemplateExec, Comparisons) {
    EXPECT_EQ(run("{{eq 1 1}} {{eq 1 2 3 1}} {{eq \"a\" \"b\"}} {{ne 1 2}} {{eq true true}}"),
              "true true false true true");
    EXPECT_EQ(run("{{lt 1 2}} {{le 2 2}} {{gt \"b\" \"a\"}} {{ge 1.5 2.5}}"),
              "true true true false");
    EXPECT_EQ(run("{{eq nil nil}} {{eq nil 1}}"), "true false");
    // float64 from JSON against an int literal: Go refuses.
    EXPECT_EQ(runj("{{eq .n 3}}", R"({"n": 3})"),
              "ERROR: template: t:1:2: executing \"t\" at <eq .n 3>: error calling eq: "
              "incompatible types for comparison");
    EXPECT_EQ(runj("{{eq .n 3.0}}", R"({"n": 3})"), "true");
    EXPECT_EQ(run("{{lt true false}}"),
              "ERROR: template: t:1:2: executing \"t\" at <lt true false>: error calling lt: "
              "invalid type for comparison");
    EXPECT_EQ(run("{{lt 1 \"a\"}}"),
              "ERROR: template: t:1:2: executing \"t\" at <lt 1 \"a\">: error calling lt: "
              "incompatible types for comparison");
    EXPECT_EQ(run("{{eq 1}}"),
              "ERROR: template: t:1:2: executing \"t\" at <eq 1>: error calling eq: missing "
              "argument for comparison");
}

TEST(TemplateExec, AndOrNotShortCircuit) {
    EXPECT_EQ(run("{{and 1 0 2}} {{and 1 2}} {{or 0 \"\" 3}} {{or 0 \"\"}} {{not 0}}"),
              "0 2 3  true");
    // The second operand is not evaluated: no missing-key error.
    EXPECT_EQ(runj("{{and .f .missing}} {{or .t .missing}}", R"({"f": false, "t": "yes"})"),
              "false yes");
    EXPECT_EQ(runj("{{and .t .missing}}", R"({"t": true})"),
              "ERROR: template: t:1:9: executing \"t\" at <.missing>: map has no entry for key "
              "\"missing\"");
    EXPECT_EQ(run("{{1 | and 2}}"), "1");
}

TEST(TemplateExec, LenIndexSlice) {
    const std::string data = R"({"l": [10, 20, 30], "m": {"a": {"b": "c"}}, "s": "héllo"})";
    EXPECT_EQ(runj("{{len .l}} {{len .m}} {{len .s}}", data), "3 1 6");
    EXPECT_EQ(runj("{{index .l 1}} {{index .m \"a\" \"b\"}} {{index .s 0}}", data), "20 c 104");
    EXPECT_EQ(runj("{{slice .l 1}} {{slice .l 1 2}} {{slice .s 0 1}} {{slice .l}}", data),
              "[20 30] [20] h [10 20 30]");
    EXPECT_EQ(runj("{{index .l 5}}", data),
              "ERROR: template: t:1:2: executing \"t\" at <index .l 5>: error calling index: "
              "index out of range: 5");
    EXPECT_EQ(runj("{{index .l 1.0}}", data),
              "ERROR: template: t:1:2: executing \"t\" at <index .l 1.0>: error calling index: "
              "cannot index slice/array with type float64");
    EXPECT_EQ(runj("{{len 3}}", data),
              "ERROR: template: t:1:2: executing \"t\" at <len 3>: error calling len: len of "
              "type int");
    EXPECT_EQ(runj("{{slice .l 2 1}}", data),
              "ERROR: template: t:1:2: executing \"t\" at <slice .l 2 1>: error calling slice: "
              "invalid slice index: 2 > 1");
}

TEST(TemplateExec, Print) {
    EXPECT_EQ(run("{{print 1 2 \"a\" 3 \"b\" \"c\"}}"), "1 2a3bc");
    EXPECT_EQ(run("{{println 1 \"a\"}}"), "1 a\n");
    EXPECT_EQ(run("{{printf \"%s|%d|%v|%q|%t|%x|%X|%o|%b|%c\" \"s\" 42 1.5 \"q\\n\" true 255 "
                  "\"hi\" 8 5 65}}"),
              "s|42|1.5|\"q\\n\"|true|ff|6869|10|101|A");
    EXPECT_EQ(run("{{printf \"%5d|%-5d|%05d|%+d|%x\" 42 42 -42 42 -255}}"),
              "   42|42   |-0042|+42|-ff");
    EXPECT_EQ(run("{{printf \"%f|%.2f|%e|%g|%8.3f|%v\" 1.5 3.14159 1234.5678 0.000001 2.0 1e21}}"),
              "1.500000|3.14|1.234568e+03|1e-06|   2.000|1e+21");
    EXPECT_EQ(run("{{printf \"%5s|%-5s|%.2s|%q\" \"ab\" \"ab\" \"abc\" 'x'}}"),
              "   ab|ab   |ab|'x'");
    EXPECT_EQ(run("{{printf \"%d %s\" \"x\" 1}}"), "%!d(string=x) %!s(int=1)");
    EXPECT_EQ(run("{{printf \"%d %d\" 1}}"), "1 %!d(MISSING)");
    EXPECT_EQ(run("{{printf \"%d\" 1 \"a\"}}"), "1%!(EXTRA string=a)");
    EXPECT_EQ(run("{{printf \"%v %s\" nil nil}}"), "<nil> %!s(<nil>)");
    EXPECT_EQ(run("{{printf \"100%%\"}}"), "100%");
    EXPECT_EQ(runj("{{printf \"%d\" .n}}", R"({"n": 3})"), "%!d(float64=3)");
    EXPECT_EQ(runj("{{printf \"%v\" .}} {{printf \"%s\" .l}}", R"({"l": ["a", 1], "b": true})"),
              "map[b:true l:[a 1]] [a %!s(float64=1)]");
    EXPECT_EQ(run("{{printf \"%*d|%-*d|%.*f\" 4 1 3 2 1 3.14159}}"), "   1|2  |3.1");
    EXPECT_EQ(run("{{printf \"%T %T %T %T\" \"\" true nil .}}", json("[]")),
              "string bool <nil> []interface {}");
}

TEST(TemplateExec, PrintfWidthsAndPrecisionsAboveAMillionAreGoErrors) {
    // fmt reads a width or precision digit by digit and gives up (the rest of the format
    // unread) once the number is above a million and another digit follows.
    EXPECT_EQ(run("{{printf \"%2000000000d\" 1}}"), "%!(NOVERB)%!(EXTRA int=1)");
    EXPECT_EQ(run("{{printf \"%.2000000000d|\" 1}}"), "%!(NOVERB)%!(EXTRA int=1)");
    EXPECT_EQ(run("{{printf \"%10000010d\" 1}}"), "%!(NOVERB)%!(EXTRA int=1)");
    // Up to there the number counts, as a width or a precision.
    EXPECT_EQ(run("{{len (printf \"%2000000d\" 1)}}|{{len (printf \"%.2000000d\" 1)}}"),
              "2000000|2000000");
    EXPECT_EQ(run("{{len (printf \"%10000009d\" 1)}}"), "10000009");
    // A '*' argument beyond a million either way is a bad width or precision.
    EXPECT_EQ(run("{{printf \"%*d\" 2000000000 1}}"), "%!(BADWIDTH)1");
    EXPECT_EQ(run("{{printf \"%*d\" -9223372036854775808 1}}"), "%!(BADWIDTH)1");
    EXPECT_EQ(run("{{printf \"%.*d\" 2000000000 1}}"), "%!(BADPREC)1");
    EXPECT_EQ(run("{{printf \"%*d|%*d\" 1.5 1 \"x\" 2}}"), "%!(BADWIDTH)1|%!(BADWIDTH)2");
    // A negative '*' width pads on the right; a negative '*' precision is a bad one.
    EXPECT_EQ(run("{{printf \"%*d|%0*d|\" -3 1 -3 2}}"), "1  |2  |");
    EXPECT_EQ(run("{{printf \"%.*d|\" -1 5}}"), "%!(BADPREC)5|");
    EXPECT_EQ(run("{{printf \"%*d\"}}|{{printf \"%*d\" 5}}"),
              "%!(BADWIDTH)%!d(MISSING)|%!d(MISSING)");
    // A '.' at the very end is the verb, not an empty precision.
    EXPECT_EQ(run("{{printf \"%.\" 1}}|{{printf \"%.\"}}"), "%!.(int=1)|%!.(MISSING)");
}

TEST(TemplateExec, PrintfCharacterOfAnIntegerBeyondUnicodeIsTheReplacementCharacter) {
    // 0x100000041: U+FFFD, not the 'A' of its low 32 bits; a negative number likewise.
    EXPECT_EQ(run("{{printf \"%c|%q|%c|%c\" 4294967361 4294967361 -1 65}}"),
              "\xEF\xBF\xBD|'\xEF\xBF\xBD'|\xEF\xBF\xBD|A");
}

TEST(TemplateExec, PrintfMarksAValueWithoutAFormForTheVerbWithTheVerbsFlags) {
    // fmt prints the value in the mark with %v and the verb's width, precision and flags.
    EXPECT_EQ(run("{{printf \"%5z|%-4d|%.2z|%05s|%+q\" 1 \"x\" 3.14159 7 true}}"),
              "%!z(int=    1)|%!d(string=x   )|%!z(float64=3.1)|%!s(int=00007)|%!q(bool=true)");
    // An unknown verb reaches a list's items, each marked.
    EXPECT_EQ(runj("{{printf \"%z\" .}}|{{printf \"%\xC3\xA9\" 1}}", "[\"a\", true]"),
              "[%!z(string=a) %!z(bool=true)]|%!\xC3\xA9(int=1)");
    EXPECT_EQ(run("{{printf \"%z|%d\" nil nil}}"), "%!z(<nil>)|%!d(<nil>)");
}

TEST(TemplateExec, HtmlAndUrlquery) {
    EXPECT_EQ(run("{{html \"<a href='x'>&\\\"</a>\"}}"),
              "&lt;a href=&#39;x&#39;&gt;&amp;&#34;&lt;/a&gt;");
    EXPECT_EQ(run("{{html 1 2}} {{\"a b\" | html}}"), "1 2 a b");
    EXPECT_EQ(run("{{urlquery \"a b&c=d/é~\"}}"), "a+b%26c%3Dd%2F%C3%A9~");
}

TEST(TemplateExec, ArgumentErrors) {
    EXPECT_EQ(run("{{printf 3}}"),
              "ERROR: template: t:1:2: executing \"t\" at <printf 3>: wrong type for value; "
              "expected string; got int");
    EXPECT_EQ(run("{{not 1 2}}"),
              "ERROR: template: t:1:2: executing \"t\" at <not>: wrong number of args for not: "
              "want 1 got 2");
    EXPECT_EQ(run("{{1 2}}"),
              "ERROR: template: t:1:2: executing \"t\" at <1>: can't give argument to "
              "non-function 1");
    EXPECT_EQ(run("{{nil}}"),
              "ERROR: template: t:1:2: executing \"t\" at <nil>: nil is not a command");
    EXPECT_EQ(runj("{{.a 1}}", R"({"a": 1})"),
              "ERROR: template: t:1:2: executing \"t\" at <.a>: a is not a method but has "
              "arguments");
    EXPECT_EQ(run("{{$x := 1}}{{$x 2}}"),
              "ERROR: template: t:1:13: executing \"t\" at <$x>: can't give argument to "
              "non-function $x");
}

// ------------------------------------------------------------------------------------------------
// Limits

TEST(TemplateLimits, SelfRecursionEndsWithAnError) {
    std::string r = run("{{define \"a\"}}{{template \"a\"}}{{end}}{{template \"a\"}}");
    EXPECT_NE(r.find("exceeded maximum template depth (1000)"), std::string::npos) << r;
    EXPECT_EQ(r.rfind("ERROR: template: t:1:", 0), 0u) << r;
    t::Options small;
    small.max_depth = 10;
    EXPECT_EQ(run("{{define \"a\"}}x{{template \"a\"}}{{end}}{{template \"a\"}}", {}, small),
              "ERROR: template: t:1:26: executing \"a\" at <{{template \"a\"}}>: exceeded maximum "
              "template depth (10)");
}

TEST(TemplateLimits, DeepNestingInsideRecursionStaysOnTheStack) {
    // 900 ifs around a self-call: 900 x 1000 levels unless the nesting limit stops it first.
    std::string ifs, ends;
    for (int i = 0; i < 900; ++i)
        ifs += "{{if 1}}", ends += "{{end}}";
    std::string r = run("{{define \"a\"}}" + ifs + "{{template \"a\"}}" + ends + "{{end}}" +
                        "{{template \"a\"}}");
    EXPECT_NE(r.find("exceeded the nesting limit of 2500"), std::string::npos) << r.substr(0, 300);
    // The same in parentheses within pipelines.
    std::string parens = std::string(900, '(') + "include \"b\" ." + std::string(900, ')');
    t::Options o;
    auto f = std::make_shared<t::Funcs>();
    t::add_builtins(*f);
    t::add_include(*f);
    t::Set set(f, o);
    ASSERT_TRUE(set.parse("t", "{{define \"b\"}}{{" + parens + "}}{{end}}"));
    auto e = set.execute("b", Value());
    ASSERT_FALSE(e);
    EXPECT_NE(e.error().message.find("exceeded the nesting limit of 2500"), std::string::npos)
        << e.error().message.substr(0, 300);
}

TEST(TemplateLimits, EmptyRangesOverListsAndMapsAreCounted) {
    // No node in the body: the iterations themselves must count, or nested ranges never stop.
    t::Options o;
    o.max_steps = 100000;
    t::Value list = t::Value::list(t::List(2000, t::Value::integer(1)));
    t::Dict d;
    for (int i = 0; i < 2000; ++i) {
        std::string key = "k"; // appended: GCC 12's -Wrestrict at -O3 on "k" + std::string
        key += std::to_string(i);
        d[key] = t::Value::integer(i);
    }
    t::Dict data{{"l", list}, {"d", t::Value::dict(std::move(d))}};
    std::string r = run("{{range $.l}}{{range $.l}}{{end}}{{end}}", t::Value::dict(data), o);
    EXPECT_NE(r.find("exceeded the limit of 100000 evaluation steps"), std::string::npos) << r;
    r = run("{{range $.d}}{{range $.d}}{{end}}{{end}}", t::Value::dict(data), o);
    EXPECT_NE(r.find("exceeded the limit of 100000 evaluation steps"), std::string::npos) << r;
}

TEST(TemplateLimits, HugeRangeAndOutput) {
    t::Options o;
    o.max_steps = 100000;
    std::string r = run("{{range 1000000000}}{{.}}{{end}}", {}, o);
    EXPECT_NE(r.find("exceeded the limit of 100000 evaluation steps"), std::string::npos) << r;
    t::Options out;
    out.max_output = 1000;
    r = run("{{range 100000}}xxxxxxxxxx{{end}}", {}, out);
    EXPECT_NE(r.find("output exceeds 1000 bytes"), std::string::npos) << r;
    // Doubling through define: output grows exponentially, the limit stops it.
    std::string text = "{{define \"d0\"}}xxxxxxxxxx{{end}}";
    for (int i = 1; i < 40; ++i)
        text += "{{define \"d" + std::to_string(i) + "\"}}{{template \"d" + std::to_string(i - 1) +
                "\"}}{{template \"d" + std::to_string(i - 1) + "\"}}{{end}}";
    text += "{{template \"d39\"}}";
    t::Options big;
    big.max_output = 1 << 20;
    r = run(text, {}, big);
    EXPECT_NE(r.find("output exceeds 1048576 bytes"), std::string::npos) << r.substr(0, 200);
}

TEST(TemplateLimits, DeepParenthesesAreAParseError) {
    std::string text = "{{" + std::string(5000, '(') + "1" + std::string(5000, ')') + "}}";
    EXPECT_EQ(run(text), "PARSE: template: t:1: max expression depth exceeded");
    std::string ifs;
    for (int i = 0; i < 5000; ++i)
        ifs += "{{if 1}}";
    EXPECT_EQ(run(ifs), "PARSE: template: t:1: max expression depth exceeded");
}

} // namespace
