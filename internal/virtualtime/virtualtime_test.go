// Package virtualtime holds the test that keeps the wall clock out of the
// correctness tests: a time.Sleep, or an elapsed time (time.Since,
// time.Until, the Sub of two times) compared with a bound, makes a test
// wait for real time, slow when it passes and flaky on a loaded machine.
// A test of a clock rule runs on virtual time instead (testing/synctest,
// where both are exact and instant) or waits for an event; performance is
// measured by benchmarks. What remains is listed in allowed, each with its
// reason, and a new one fails the test.
package virtualtime

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// allowance is what one function of a test file may keep: its count of
// wall-clock sleeps and of elapsed-time comparisons, and why.
type allowance struct {
	file, fn       string
	sleeps, bounds int
	why            string
}

var allowed = []allowance{
	// Virtual time already: helpers that only tests in synctest bubbles call.
	{"handler/virtual_time_test.go", "outageStore.outage", 1, 0, "a refused connection's millisecond, in bubbles only"},
	{"retrying/store_test.go", "outageStore.CreateOrder", 1, 0, "a refused connection's milliseconds, in bubbles only"},
	// Not bounds: load only widens the margin, or the order of events.
	{"handler/process_order_batch_test.go", "TestBatchSummaryCountsOutcomes", 0, 1, "durationMs is at most what the request took"},
	{"handler/process_order_log_lines_test.go", "TestLogDurationIsMilliseconds", 0, 1, "durationMs is at most what the request took"},
	{"handler/publish_order_events_test.go", "TestPublisherLogLine", 0, 1, "durationMs is at most what the request took"},
	{"testbed/faults/proxy_test.go", "TestProxySlowForwardsThenAnswersLate", 0, 1, "a slow answer comes at least its delay late"},
	{"testbed/chaos/stall_test.go", "firstCreatedSince", 0, 3, "which create came first after a time, not how long it took"},
	// Real processes and sockets, which a bubble cannot hold.
	{"testbed/faults/proxy_test.go", "TestProxyLatencyHoldsEveryAnswer", 0, 2,
		"the proxy listens on loopback: answers come at least their latency late, and an injected 429 before a latency of 5 s, 100 times what it takes"},
	{"testbed/hostemu/worker_test.go", "fakeHandler", 2, 0, "the fake handler process starts slowly or never, as asked"},
	{"testbed/hostemu/host_test.go", "fakeFunction", 1, 0, "the fake handler's function answers late when its message asks: in bubbles, in the fake handler process (a hang), and in the burst test on loopback, the fault's shape, no bound"},
	{"testbed/hostemu/changefeed_test.go", "TestChangeFeedDeliversEachPartitionInOrder", 1, 0,
		"a write in a later second of the Cosmos emulator's clock (_ts has whole seconds): a wait, no bound"},
	{"testbed/chaos/stall_test.go", "stallWindow.run", 1, 0,
		"the 403 window of the make chaos stall lasts 3 s against a real handler process: the fault's shape, no bound"},
}

// finding is one sleep or bound on the wall clock, in a function of a
// test file.
type finding struct {
	file, fn string
	bound    bool // an elapsed-time comparison; a time.Sleep otherwise
	line     int
}

// TestNoWallClockInCorrectnessTests: every sleep and elapsed-time bound of
// a test outside a synctest bubble and outside a benchmark is allowed.
func TestNoWallClockInCorrectnessTests(t *testing.T) {
	found, err := scanTree(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ file, fn string }
	got := map[key][2]int{}
	var lines = map[key][]string{}
	sleeps, bounds := 0, 0
	for _, f := range found {
		k := key{f.file, f.fn}
		c := got[k]
		if f.bound {
			c[1]++
			bounds++
		} else {
			c[0]++
			sleeps++
		}
		got[k] = c
		lines[k] = append(lines[k], fmt.Sprintf("%s:%d", f.file, f.line))
	}
	t.Logf("on the wall clock, outside bubbles and benchmarks: %d time.Sleep, %d elapsed-time comparisons", sleeps, bounds)
	for _, a := range allowed {
		k := key{a.file, a.fn}
		if c := got[k]; c != [2]int{a.sleeps, a.bounds} {
			t.Errorf("%s %s: %d sleeps and %d elapsed-time bounds, allowed %d and %d (%s): %v; run it on virtual time (testing/synctest) or wait on an event, or update the allowance",
				a.file, a.fn, c[0], c[1], a.sleeps, a.bounds, a.why, lines[k])
		}
		delete(got, k)
	}
	keys := make([]key, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return lines[keys[i]][0] < lines[keys[j]][0] })
	for _, k := range keys {
		c := got[k]
		t.Errorf("%s %s: %d time.Sleep and %d elapsed-time bounds on the wall clock (%v): run it on virtual time (testing/synctest) or wait on an event",
			k.file, k.fn, c[0], c[1], lines[k])
	}
	if len(found) < 3 {
		t.Errorf("found %d, fewer than the allowed ones: the scan lost them", len(found))
	}
}

// scanTree scans every _test.go file under root.
func scanTree(root string) ([]finding, error) {
	var found []finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".emulator", "node_modules", "testdata", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		found = append(found, scan(fset, filepath.ToSlash(rel), file)...)
		return nil
	})
	return found, err
}

// scan returns the wall-clock sleeps and elapsed-time comparisons of file's
// functions, leaving out benchmarks and what runs in a synctest bubble (the
// function literal given to synctest.Test).
func scan(fset *token.FileSet, name string, file *ast.File) []finding {
	var found []finding
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || strings.HasPrefix(fd.Name.Name, "Benchmark") {
			continue
		}
		fn := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			fn = typeName(fd.Recv.List[0].Type) + "." + fn
		}
		elapsed := elapsedVars(fd.Body)
		var bubbles []ast.Node
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok && isCall(c, "synctest", "Test") && len(c.Args) == 2 {
				bubbles = append(bubbles, c.Args[1])
			}
			return true
		})
		inBubble := func(n ast.Node) bool {
			for _, b := range bubbles {
				if n.Pos() >= b.Pos() && n.End() <= b.End() {
					return true
				}
			}
			return false
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if isCall(n, "time", "Sleep") && !inBubble(n) {
					found = append(found, finding{name, fn, false, fset.Position(n.Pos()).Line})
				}
			case *ast.BinaryExpr:
				switch n.Op {
				case token.LSS, token.LEQ, token.GTR, token.GEQ:
					if (isElapsed(n.X, elapsed) || isElapsed(n.Y, elapsed)) && !inBubble(n) {
						found = append(found, finding{name, fn, true, fset.Position(n.Pos()).Line})
					}
				}
			}
			return true
		})
	}
	return found
}

// elapsedVars names the variables of body given an elapsed time.
func elapsedVars(body *ast.BlockStmt) map[string]bool {
	vars := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && len(a.Lhs) == len(a.Rhs) {
			for i, rhs := range a.Rhs {
				if id, ok := a.Lhs[i].(*ast.Ident); ok && isElapsed(rhs, vars) {
					vars[id.Name] = true
				}
			}
		}
		return true
	})
	return vars
}

// isElapsed reports whether e holds an elapsed time: a call of time.Since,
// time.Until or a Sub method, or a variable given one.
func isElapsed(e ast.Expr, vars map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if isCall(n, "time", "Since") || isCall(n, "time", "Until") {
				found = true
			}
			if s, ok := n.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Sub" && len(n.Args) == 1 {
				found = true
			}
		case *ast.Ident:
			if vars[n.Name] {
				found = true
			}
		case *ast.FuncLit:
			return false
		}
		return !found
	})
	return found
}

// isCall reports whether c calls pkg.name.
func isCall(c *ast.CallExpr, pkg, name string) bool {
	s, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != name {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == pkg
}

func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return typeName(e.X)
	}
	return "?"
}

// TestScanFindsTheWallClock: the scan finds a sleep and the comparisons of
// an elapsed time, directly or through a variable, and passes over a
// bubble, a benchmark and comparisons of other durations.
func TestScanFindsTheWallClock(t *testing.T) {
	src := `package p

func TestWall(t *testing.T) {
	start := time.Now()
	time.Sleep(time.Second)
	took := time.Since(start)
	if took > time.Second || time.Until(deadline) < 0 || end.Sub(start) >= d {
	}
	if d := 2 * time.Second; d > time.Second {
	}
}

func TestVirtual(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Hour)
		if time.Since(start) != time.Hour || time.Since(start) > time.Hour {
		}
	})
}

func BenchmarkX(b *testing.B) { time.Sleep(time.Second) }
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range scan(fset, "p_test.go", file) {
		got = append(got, fmt.Sprintf("%s:%d bound=%v", f.fn, f.line, f.bound))
	}
	want := "TestWall:5 bound=false TestWall:7 bound=true TestWall:7 bound=true TestWall:7 bound=true"
	if strings.Join(got, " ") != want {
		t.Errorf("found %q, want %q", strings.Join(got, " "), want)
	}
}
