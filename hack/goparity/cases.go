package main

// The case inputs: the inputs of Go's and Kubernetes' own tests for the functions we mirror, read
// from the test files of the pinned toolchain and module (so a version bump brings its new cases
// along), followed by our own degenerate inputs and the examples of the issues we fixed.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode"
)

// goTestFile is a test file of the Go toolchain running this program.
func goTestFile(rel string) string {
	return filepath.Join(runtime.GOROOT(), "src", rel)
}

// moduleTestFile is a test file of the resource package, in the module cache directory of the
// apimachinery version this program links (go.mod pins it, so the cache holds it).
func moduleTestFile(name string) string {
	dir := filepath.Join(modCache(), "k8s.io", "apimachinery@"+apimachineryVersion, "pkg", "api", "resource")
	return filepath.Join(dir, name)
}

func modCache() string {
	if v := os.Getenv("GOMODCACHE"); v != "" {
		return v
	}
	if v := os.Getenv("GOPATH"); v != "" {
		return filepath.Join(strings.Split(v, string(os.PathListSeparator))[0], "pkg", "mod")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		fail("no GOMODCACHE, GOPATH or home directory: %v", err)
	}
	return filepath.Join(home, "go", "pkg", "mod")
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "goparity: "+format+"\n", args...)
	os.Exit(1)
}

func parseFile(path string) *ast.File {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		fail("%v", err)
	}
	return f
}

// firstString is the first string of a table row: `{"in", ...}`, `{in: "x", ...}` or a plain
// `"x"` element of a []string.
func firstString(e ast.Expr) (string, bool) {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, err := strconv.Unquote(v.Value)
			return s, err == nil
		}
	case *ast.CompositeLit:
		if len(v.Elts) == 0 {
			return "", false
		}
		first := v.Elts[0]
		if kv, ok := first.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); !ok || (id.Name != "in" && id.Name != "input") {
				return "", false
			}
			first = kv.Value
		}
		if lit, ok := first.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, err := strconv.Unquote(lit.Value)
			return s, err == nil
		}
	}
	return "", false
}

// tableInputs returns the first strings of the rows of the named package-level tables.
func tableInputs(path string, vars ...string) []string {
	want := map[string]bool{}
	for _, v := range vars {
		want[v] = true
	}
	var out []string
	for _, d := range parseFile(path).Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !want[name.Name] || i >= len(vs.Values) {
					continue
				}
				delete(want, name.Name)
				lit, ok := vs.Values[i].(*ast.CompositeLit)
				if !ok {
					continue
				}
				for _, row := range lit.Elts {
					if s, ok := firstString(row); ok {
						out = append(out, s)
					}
				}
			}
		}
	}
	for v := range want {
		fail("%s: no table %s", path, v)
	}
	return out
}

// functionInputs returns, inside the named test functions, the first strings of the rows of every
// slice literal and the arguments of every MustParse/ParseQuantity call.
func functionInputs(path string, funcs ...string) []string {
	want := map[string]bool{}
	for _, f := range funcs {
		want[f] = true
	}
	var out []string
	for _, d := range parseFile(path).Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !want[fn.Name.Name] {
			continue
		}
		delete(want, fn.Name.Name)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch v := n.(type) {
			case *ast.CompositeLit:
				if _, ok := v.Type.(*ast.ArrayType); ok {
					for _, row := range v.Elts {
						if s, ok := firstString(row); ok {
							out = append(out, s)
						}
					}
				}
			case *ast.CallExpr:
				name := ""
				switch f := v.Fun.(type) {
				case *ast.Ident:
					name = f.Name
				case *ast.SelectorExpr:
					name = f.Sel.Name
				}
				if (name == "MustParse" || name == "ParseQuantity") && len(v.Args) == 1 {
					if s, ok := firstString(v.Args[0]); ok {
						out = append(out, s)
					}
				}
			}
			return true
		})
	}
	for f := range want {
		fail("%s: no function %s", path, f)
	}
	return out
}

// spaces are the runes either Go's unicode.IsSpace or JavaScript's String.prototype.trim treat as
// white space, and a few neither does (zero-width and separator controls).
func spaces() []rune {
	var out []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.IsSpace(r) {
			out = append(out, r)
		}
	}
	return append(out, 0xFEFF, 0x200B, 0x180E, 0x2060, 0x1C, 0x1D, 0x1E, 0x1F, 0x00)
}

// padded wraps each body in each space: before, after and around.
func padded(bodies ...string) []string {
	var out []string
	for _, r := range spaces() {
		for _, b := range bodies {
			s := string(r)
			out = append(out, s+b, b+s, s+b+s)
		}
	}
	return out
}

var numberExtras = []string{
	// underscores: Go accepts them between digits, base 10 included
	"1_000", "1_000.5", "1_0e1_0", "1__000", "_1000", "1000_", "1_.5", "1._5", "1e_1", "0x_1p0",
	"0x1_0p0", "0x_p0", "0_1", "-1_000", "+_1",
	// trimming
	"", " ", "\t\n", " 42 ", "\u00851", "1\u0085", "\ufeff1", "1\ufeff", "\u00a0\u30001\u2029",
	// signs, shapes
	"+", "-", ".", "+.", "-.5", "+.5", "5.", "-5.", "e5", "1e", "1e+", "1e-", "1E5", "1e+05",
	"--1", "+-1", "1.2.3", "1e1e1", "1,000", "1 000", "0b101", "0o17", "017", "0012.5", "1p5",
	"\u0661", "\uff11", "1f", "1d", "0x", "0X", "0x1", "0x1p", "0xp1", "0x.p1", "0x.8p1",
	"0x1.8p1", "0X1P-2", "0x1.p0", "0x1e2", "0x1e2p0", "0xg", "-0x", "0x1p+", "0x1p-",
	// specials
	"inf", "Inf", "INF", "+inf", "-inf", "infinity", "Infinity", "-Infinity", "+INFINITY",
	"infinit", "infinityy", "infinite", "in", "nan", "NaN", "NAN", "+nan", "-NaN", "nan(0)",
	"nana", "∞",
	// range
	"1e400", "-1e400", "1e308", "1.7976931348623157e308", "1.7976931348623158e308",
	"1.7976931348623159e308", "-1.7976931348623159e308", "2e308", "4.9e-324", "2.4e-324",
	"2.5e-324", "2.4703282292062328e-324", "1e-400", "-1e-400", "1e99999", "1e100000",
	"1e-99999", "1e-100000", "0e99999999999999999999", "1e99999999999999999999",
	"1e-99999999999999999999",
	// integers around 2^53 and int64
	"9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993",
	"9007199254740993.0", "9.007199254740993e15", "1764590400123456789", "9223372036854775807",
	"9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"18446744073709551616", "1e19", "1e18", "9.223372036854775807e18",
	"9223372036854775807.4", "9223372036854775807.5", "-9223372036854775808.4",
	"-9223372036854775808.5", "9223372036854775806.5", "35184372088832",
	// fractions and rounding
	"2.5", "-2.5", "0.5", "-0.5", "1.5", "-1.5", "0.49999999999999999", "2.49999999999999999999",
	"-2.50000000000000000001", "1.0000000000000000001", "9007199254740993.5",
	"9007199254740992.5", "4503599627370495.5", "4503599627370496.5", "1e-5", "-1e-5",
	"0.1e1", "1e-1", "123.456e2",
	// hexadecimal precision
	"0x1p62", "0x1p63", "-0x1p63", "0x1.00000000000008p0", "0x1.00000000000018p0",
	"0x1.000000000000080000001p0", "0x1p-1074", "0x1p-1075", "0x1.8p-1075", "0x1p-1076",
	"0x0.0000000000001p-1022", "0x1p+1023", "0x1.fffffffffffffp1023",
	"0x1.fffffffffffff7ffp1023", "0x1.fffffffffffff8p1023", "0x8p1020", "0x10p-1078",
	"0x123456789abcdef0123456789p-100", "0x.000000000000000000001p100",
	// long digit strings (the slow path, the exponent cap)
	"1" + strings.Repeat("0", 400), "0." + strings.Repeat("0", 400) + "1",
	"4" + strings.Repeat("9", 799) + "e-800",
	"2.47032822920623272088284396434110686182529901307162382212792841250337753635104375932649918180817996189898282347722858865463328355177969898199387398005390939063150356595155702263922908583924491051844359318028499365361525003193704576782492193656236698636584807570015857692699037063119282795585513329278343384093519780155312465972635795746227664652728272200563740064854999770965994704540208281662262378573934507363390079677619305775067238", "0x1p-1074",
	"0." + strings.Repeat("0", 20000) + "1e20001", "1" + strings.Repeat("0", 20000) + "e-20000",
	"1" + strings.Repeat("0", 1000) + "e-1000", // Go reads this as 1e-201 (docs/limitations.md)
}

var boolExtras = []string{
	"", " ", "1", "0", "t", "f", "T", "F", "true", "false", "True", "False", "TRUE", "FALSE",
	"tRUE", "yes", "no", "on", "off", "y", "n", "2", "-1", "01", " true ", "\u0085true",
	"\ufefftrue", "true\u0085", "truee", "t rue",
}

var quantityExtras = []string{
	// degenerate shapes
	"", "0", "+", "-", ".", "+.", "-.", "..", "1.", ".5", "+.5", "-.5", "1.G", ".Ki", "-.Ki",
	"-.e-20", ".e-5", "+1", "-1", "00", "-0", "+0", "0.0", "000.000", "-000", "0001.5000",
	"1e", "1E", "1e3", "1E3", "1e+3", "1E-3", "1e-3m", "1e+", "1e-", "1E+", "1E-", "1e-0",
	"1e01", "1e+0", "1ki", "1KI", "1K", "1Ki", "1Mi", "1.5Gi", "0.5Ki", "1Ei", "7Ei", "8Ei",
	"16Ei", "-16Ei", "1.5Ei", "-8Ei", "1024Ei", "0.001Ki", "1n", "1u", "1m", "0.1m", "0.0001",
	"-0.0001", "1.5n", "0.5n", "-0.5n", "1mm", "1Mi1", "1Ki2", "5.G", "1.1.M", "1 ", " 1",
	"1\n", "\t1", "1_000", "0x10", "1e3.5", "inf", "NaN", "1.2.3", "1e1e1", "1e3m", "1eE",
	"1iE", "1Kii", "1.5.", "e3", "E", "Ki", "m", "-m", "+Ki", "1P", "1T", "1G", "1M", "1k",
	"1Pi", "1Ti", "1Gi", "1Ki1", "1e-9", "1e-10", "-1e-10", "1e-19", "1e19", "1e20",
	// magnitudes around int64 and the milli scale
	"9223372036854775807", "9223372036854775808", "-9223372036854775808",
	"-9223372036854775809", "9223372036854775807m", "-9223372036854775808m",
	"9223372036854775808m", "9223372036854775807k", "9223372036854775", "9223372036854776",
	"9223372036854775.807", "9223372036854775.8071", "-9223372036854775.808",
	"-9223372036854775.8081", "9007199254740993", "9007199254740993m", "1764590400123456789",
	"123456789012345678901234567890", "0.123456789012345678901234567890",
	"-123456789012345678901234567890m",
	// exponents and their int32 arithmetic
	// (Kubernetes never returns for "1e-2147483647", "1e-2147483648", "1e2147483648" and
	// "1.5e-2147483647": its rounding computes 10 to the power of the exponent. They are tested
	// in the TypeScript suite, not here.)
	"1e400", "-1e400", "1e15", "1e16", "1e18", "1e-400", "-1e-400", "1e2147483647",
	"1.5e2147483648", "1e-2147483649", "1e4294967296", "1e4294967299", "1e9223372036854775807",
	"1e-9223372036854775808", "1e9223372036854775808", "1e99999999999999999999",
	"1e-100000", "123456789012345678901e-100000", "1234567890123456789012e100000",
	// sub-nano and sub-milli rounding, both signs
	"0.0000000001", "-0.0000000001", "0.0000000000000000001", "-0.0000000000000000001",
	"-1.0000000000000000001", "1.0000000000000000001", "-1.0000000001", "1.0000000001",
	"-0.0005", "0.0005", "-1.0005", "-1000000000000000000.0005", "1000000000000000000.0005",
	"-0.0000000000000000000001Ki", "0.0000000000000000000001Ki",
}

// milliExtras are milli-values to format, beyond the milli-values of the parsed quantities.
var milliExtras = []int64{
	0, 1, -1, 500, 1000, 1500, 250000, 2000000, 1073741824000, 1000000000, -90,
	9223372036854775807, -9223372036854775808, 9223372036854775000, -9223372036854775000,
	9007199254740993, 1000000000000000000, 10000000000000000, 999, 1001, 100, 10,
}

// numberCases are the inputs for strconv.ParseFloat, ParseInt and the exact integer reading.
func numberCases() []string {
	atof := goTestFile("internal/strconv/atof_test.go")
	atoi := goTestFile("internal/strconv/atoi_test.go")
	out := tableInputs(atof, "atoftests", "atof32tests")
	out = append(out, tableInputs(atoi, "parseInt64Tests", "parseUint64Tests", "parseInt64BaseTests")...)
	out = append(out, numberExtras...)
	return dedupe(append(out, padded("1", "-1.5", "0x1p0", "inf", "1_0")...))
}

func boolCases() []string {
	out := tableInputs(goTestFile("internal/strconv/atob_test.go"), "atobtests")
	return dedupe(append(append(out, boolExtras...), padded("true", "0")...))
}

func quantityCases() []string {
	out := functionInputs(moduleTestFile("quantity_test.go"),
		"TestParseQuantityString", "TestQuantityParse", "TestQuantityRoundUp", "TestQuantityParseEmit",
		"TestParseQuantity", "TestStringQuantityAsApproximateFloat64", "TestStringQuantityAsFloat64Slow",
		"TestQuantityCmp", "TestQuantityString", "TestJSON", "TestScaledValue")
	return dedupe(append(out, quantityExtras...))
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
