// Command goparity prints, as JSON, what Go's strconv and Kubernetes' resource.ParseQuantity make
// of a list of inputs: the fixture the TypeScript parity tests compare dco's parsers with.
//
//	cd hack/goparity && go run . > ../../tests/engine/fixtures/goparity.jsonl
//
// The inputs are the inputs of the functions' own test tables (read from the test files of the Go
// toolchain and of the pinned k8s.io/apimachinery) plus our degenerate cases (cases.go). Every
// result comes from the real functions; the only values computed here are the exact readings the
// Go functions do not offer (the exact integer of a number string, the exact milli-value of a
// quantity), each from math/big.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

var apimachineryVersion = moduleVersion("k8s.io/apimachinery")

func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fail("no build info")
	}
	for _, d := range info.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	fail("module %s is not linked", path)
	return ""
}

// result is {"value": …} or {"err": kind}.
type result struct {
	Value any    `json:"value,omitempty"`
	Err   string `json:"err,omitempty"`
}

type numberCase struct {
	In string `json:"in"`
	// Float is strconv.ParseFloat(strings.TrimSpace(in), 64): the IEEE bits as 16 hex digits,
	// with err "syntax" or "range" (bits then hold ±Inf or 0).
	Float struct {
		Bits string `json:"bits"`
		Err  string `json:"err,omitempty"`
	} `json:"float"`
	// ParseInt is strconv.ParseInt(strings.TrimSpace(in), 10, 64).
	ParseInt result `json:"parseInt"`
	// Exact is the exact value of the number ParseFloat read, as an int64 under each fraction
	// policy (err "fraction" under Error, "range" outside int64); absent for inf/nan, syntax
	// errors and exponents of six digits or more (where Go caps the exponent it reads).
	Exact map[string]result `json:"exact,omitempty"`
}

type boolCase struct {
	In    string `json:"in"`
	Value *bool  `json:"value"` // strconv.ParseBool(strings.TrimSpace(in)); null on error
}

type quantityCase struct {
	In  string `json:"in"`
	Err string `json:"err,omitempty"` // "format", "numeric" or "suffix"
	// The value as unscaled × 10^exp with no trailing zeros in unscaled (0 is "0", 0).
	Unscaled string `json:"unscaled,omitempty"`
	Exp      *int64 `json:"exp,omitempty"`
	// Milli is the exact milli-value rounded away from zero; MilliErr "range" when it does not fit
	// an int64. MilliValue is what Quantity.MilliValue returns (it overflows silently).
	Milli      string `json:"milli,omitempty"`
	MilliErr   string `json:"milliErr,omitempty"`
	MilliValue string `json:"milliValue,omitempty"`
	String     string `json:"string,omitempty"` // Quantity.String, when the exponent is small
}

type milliCase struct {
	Milli  string `json:"milli"`
	String string `json:"string"` // resource.NewMilliQuantity(milli, DecimalSI).String()
}

func main() {
	var out bytes.Buffer
	line(&out, map[string]string{
		"generator":    "cd hack/goparity && go run . > ../../tests/engine/fixtures/goparity.jsonl",
		"go":           runtime.Version(),
		"apimachinery": apimachineryVersion,
	})
	for _, in := range numberCases() {
		line(&out, kinded{"number", number(in)})
	}
	for _, in := range boolCases() {
		c := boolCase{In: in}
		if v, err := strconv.ParseBool(strings.TrimSpace(in)); err == nil {
			c.Value = &v
		}
		line(&out, kinded{"bool", c})
	}
	var millis []int64
	for _, in := range quantityCases() {
		q := quantity(in)
		line(&out, kinded{"quantity", q})
		if q.Milli != "" {
			m, _ := strconv.ParseInt(q.Milli, 10, 64)
			millis = append(millis, m)
		}
	}
	seen := map[int64]bool{}
	for _, m := range append(milliExtras, millis...) {
		if !seen[m] {
			seen[m] = true
			s := resource.NewMilliQuantity(m, resource.DecimalSI).String()
			line(&out, kinded{"formatMilli", milliCase{strconv.FormatInt(m, 10), s}})
		}
	}
	os.Stdout.Write(out.Bytes())
}

// kinded is one line of the fixture: which table, and the case.
type kinded struct {
	Kind string `json:"kind"`
	Case any    `json:"case"`
}

// line writes v as one JSON line (JSON Lines: a regenerated fixture diffs case by case).
func line(out *bytes.Buffer, v any) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fail("%v", err)
	}
}

func errKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, strconv.ErrSyntax):
		return "syntax"
	case errors.Is(err, strconv.ErrRange):
		return "range"
	}
	fail("unexpected error %v", err)
	return ""
}

func number(in string) numberCase {
	s := strings.TrimSpace(in)
	c := numberCase{In: in}
	f, err := strconv.ParseFloat(s, 64)
	c.Float.Bits = fmt.Sprintf("%016x", math.Float64bits(f))
	c.Float.Err = errKind(err)
	if i, err := strconv.ParseInt(s, 10, 64); err != nil {
		c.ParseInt = result{Err: errKind(err)}
	} else {
		c.ParseInt = result{Value: strconv.FormatInt(i, 10)}
	}
	if (err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)) || errors.Is(err, strconv.ErrRange) {
		c.Exact = exactInts(s)
	}
	return c
}

// exactInts reads s (accepted by ParseFloat) as an exact rational and applies each fraction policy.
func exactInts(s string) map[string]result {
	lower := strings.ToLower(s)
	expChar := "e"
	if strings.HasPrefix(strings.TrimLeft(lower, "+-"), "0x") {
		expChar = "p"
	}
	if at := strings.LastIndex(lower, expChar); at >= 0 {
		exp := strings.NewReplacer("_", "", "+", "", "-", "").Replace(lower[at+1:])
		if len(strings.TrimLeft(exp, "0")) >= 6 {
			return nil
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		fail("big.Rat cannot read %q, which ParseFloat accepts", s)
	}
	num, den := r.Num(), r.Denom()
	trunc := new(big.Int).Quo(num, den)
	rem := new(big.Int).Sub(num, new(big.Int).Mul(trunc, den))
	round := new(big.Int).Set(trunc)
	if new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2)).Cmp(den) >= 0 {
		round.Add(round, big.NewInt(int64(num.Sign())))
	}
	int64Of := func(n *big.Int) result {
		if !n.IsInt64() {
			return result{Err: "range"}
		}
		return result{Value: n.String()}
	}
	out := map[string]result{"Truncate": int64Of(trunc), "Round": int64Of(round)}
	if rem.Sign() != 0 {
		out["Error"] = result{Err: "fraction"}
	} else {
		out["Error"] = int64Of(trunc)
	}
	return out
}

func quantity(in string) quantityCase {
	type parsed struct {
		q   resource.Quantity
		err error
	}
	done := make(chan parsed, 1)
	go func() {
		q, err := resource.ParseQuantity(in)
		done <- parsed{q, err}
	}()
	var p parsed
	select {
	case p = <-done:
	case <-time.After(5 * time.Second):
		fail("ParseQuantity(%q) did not return within 5 s: take the case out of cases.go", in)
	}
	c := quantityCase{In: in}
	switch {
	case p.err == nil:
	case errors.Is(p.err, resource.ErrFormatWrong):
		c.Err = "format"
		return c
	case errors.Is(p.err, resource.ErrNumeric):
		c.Err = "numeric"
		return c
	case errors.Is(p.err, resource.ErrSuffix):
		c.Err = "suffix"
		return c
	default:
		fail("ParseQuantity(%q): unexpected error %v", in, p.err)
	}
	q := p.q
	// MilliValue and String first: AsDec turns an int64 amount into an inf.Dec in place, and
	// MilliValue takes another path on those.
	c.MilliValue = strconv.FormatInt(q.MilliValue(), 10)
	if str := q.String(); len(str) < 1000 {
		c.String = str
	}
	d := q.AsDec()
	unscaled := new(big.Int).Set(d.UnscaledBig())
	exp := -int64(d.Scale())
	ten := big.NewInt(10)
	if unscaled.Sign() == 0 {
		exp = 0
	}
	for unscaled.Sign() != 0 {
		quo, rem := new(big.Int).QuoRem(unscaled, ten, new(big.Int))
		if rem.Sign() != 0 {
			break
		}
		unscaled, exp = quo, exp+1
	}
	c.Unscaled, c.Exp = unscaled.String(), &exp
	// The exact milli-value: unscaled × 10^(exp+3), rounded away from zero.
	digits := int64(len(new(big.Int).Abs(unscaled).String()))
	shift := exp + 3
	var milli *big.Int
	switch {
	case unscaled.Sign() == 0:
		milli = new(big.Int)
	case shift >= 0 && digits+shift > 20:
		c.MilliErr = "range"
		return c
	case shift >= 0:
		milli = new(big.Int).Mul(unscaled, new(big.Int).Exp(ten, big.NewInt(shift), nil))
	case -shift > digits+1:
		milli = big.NewInt(int64(unscaled.Sign()))
	default:
		quo, rem := new(big.Int).QuoRem(unscaled, new(big.Int).Exp(ten, big.NewInt(-shift), nil), new(big.Int))
		if rem.Sign() != 0 {
			quo.Add(quo, big.NewInt(int64(unscaled.Sign())))
		}
		milli = quo
	}
	if !milli.IsInt64() {
		c.MilliErr = "range"
		return c
	}
	c.Milli = milli.String()
	return c
}
