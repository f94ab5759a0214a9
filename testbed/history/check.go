package history

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Op is one operation as a client saw it: called at Call, answered at
// Return. An Unknown output's Return does not count: its effects may come
// at any time after its call.
type Op struct {
	Input
	Output
	Call, Return time.Time
}

// Result is what a check found and what it cost.
type Result struct {
	Ops, Partitions int
	Took            time.Duration
	// Illegal are the orderIds whose operations fit no sequential order;
	// Undecided those the checker gave up on within its time.
	Illegal, Undecided []string
	// Visualisation is the HTML file showing the illegal and undecided
	// partitions ("" when none, or when it could not be written:
	// VisualisationErr).
	Visualisation    string
	VisualisationErr error
}

// maxShown bounds the illegal partitions drawn in the visualisation.
const maxShown = 20

// Check checks ops one orderId at a time, each within timeout, and draws
// the illegal ones (at most maxShown) into htmlPath when set.
func Check(ops []Op, timeout time.Duration, htmlPath string) Result {
	start := time.Now()
	model := Model.ToModel()
	parts := partition(ops)
	res := Result{Ops: len(ops), Partitions: len(parts)}
	var shown []porcupine.Operation
	for _, id := range slices.Sorted(maps.Keys(parts)) {
		switch porcupine.CheckOperationsTimeout(model, parts[id], timeout) {
		case porcupine.Illegal:
			res.Illegal = append(res.Illegal, id)
			if len(res.Illegal) <= maxShown {
				shown = append(shown, parts[id]...)
			}
		case porcupine.Unknown:
			res.Undecided = append(res.Undecided, id)
			if len(res.Illegal)+len(res.Undecided) <= maxShown {
				shown = append(shown, parts[id]...)
			}
		}
	}
	res.Took = time.Since(start)
	if len(shown) > 0 && htmlPath != "" {
		model.Partition = func(h []porcupine.Operation) [][]porcupine.Operation {
			by := map[string][]porcupine.Operation{}
			for _, op := range h {
				id := op.Input.(Input).OrderID
				by[id] = append(by[id], op)
			}
			return slices.Collect(maps.Values(by))
		}
		_, info := porcupine.CheckOperationsVerbose(model, shown, timeout)
		res.VisualisationErr = errors.Join(porcupine.VisualizePath(model, info, htmlPath),
			os.WriteFile(strings.TrimSuffix(htmlPath, ".html")+".txt", describe(shown), 0o644))
		if res.VisualisationErr == nil {
			res.Visualisation = htmlPath
		}
	}
	return res
}

// partition turns ops into porcupine's operations by orderId, on one clock
// in nanoseconds from the first call; an unknown output returns after
// everything else, and each operation gets the first row (ClientId) free
// at its call, for the visualisation.
func partition(ops []Op) map[string][]porcupine.Operation {
	if len(ops) == 0 {
		return nil
	}
	base := slices.MinFunc(ops, func(a, b Op) int { return a.Call.Compare(b.Call) }).Call
	byID := map[string][]Op{}
	for _, op := range ops {
		byID[op.OrderID] = append(byID[op.OrderID], op)
	}
	parts := make(map[string][]porcupine.Operation, len(byID))
	for id, list := range byID {
		list = pruned(list)
		slices.SortStableFunc(list, func(a, b Op) int { return a.Call.Compare(b.Call) })
		var rows []int64 // when each row is free again
		out := make([]porcupine.Operation, len(list))
		for i, op := range list {
			call, ret := int64(op.Call.Sub(base)), int64(op.Return.Sub(base))
			if op.Unknown {
				ret = math.MaxInt64
			}
			row := slices.IndexFunc(rows, func(free int64) bool { return free < call })
			if row < 0 {
				row, rows = len(rows), append(rows, 0)
			}
			rows[row] = ret
			out[i] = porcupine.Operation{ClientId: row, Input: op.Input, Output: op.Output, Call: call, Return: max(ret, call)}
		}
		parts[id] = out
	}
	return parts
}

// describe lists ops as text, one a line, partition by partition: when
// each was called and returned (ms from the partition's first call; "-"
// for an unknown return) and what it was.
func describe(ops []porcupine.Operation) []byte {
	var b bytes.Buffer
	var base int64
	last := ""
	for _, op := range ops {
		in := op.Input.(Input)
		if in.OrderID != last {
			last, base = in.OrderID, op.Call
			fmt.Fprintf(&b, "\n%s\n", in.OrderID)
		}
		ret := "-"
		if op.Return != math.MaxInt64 {
			ret = fmt.Sprintf("%.1f", float64(op.Return-base)/1e6)
		}
		fmt.Fprintf(&b, "  %9.1f %9s  %s\n", float64(op.Call-base)/1e6, ret, Model.DescribeOperation(op.Input, op.Output))
	}
	return b.Bytes()
}

// pruned drops the operations without an answer that can have had no
// effect, which the checker would otherwise try at every point after their
// call: a GET; a POST called after a final answer of its key had come (its
// key is final: a replay, or 422); a delivery called after an answer
// showing the order stored had come. Of the unanswered attempts of one key
// and payload (or deliveries of one payload) it keeps the first: what
// several of them may have done, one may have done too (a client retrying
// through an outage sends dozens), so only their times are merged.
func pruned(ops []Op) []Op {
	final := map[string]time.Time{} // key -> first return of a final answer
	var stored time.Time            // first return of an answer showing the order
	earliest := func(t *time.Time, at time.Time) {
		if t.IsZero() || at.Before(*t) {
			*t = at
		}
	}
	for _, op := range ops {
		switch {
		case op.Unknown:
		case op.Kind == Submit && (op.Status/100 == 2 || op.Outcome == OrderIDTaken):
			t := final[keyID(op.Input)]
			earliest(&t, op.Return)
			final[keyID(op.Input)] = t
			if op.Status/100 == 2 {
				earliest(&stored, op.Return)
			}
		case op.Kind == Get && op.Status == 200, op.Kind == Publish,
			op.Kind == Deliver && (op.Outcome == Created || op.Outcome == Duplicate || op.Outcome == Mismatch):
			earliest(&stored, op.Return)
		}
	}
	slices.SortStableFunc(ops, func(a, b Op) int { return a.Call.Compare(b.Call) })
	first := map[Input]bool{}
	return slices.DeleteFunc(ops, func(op Op) bool {
		if !op.Unknown {
			return false
		}
		t, ok := final[keyID(op.Input)]
		same := Input{Kind: op.Kind, Client: op.Client, Key: op.Key, Hash: op.Hash}
		seen := first[same]
		first[same] = true
		return op.Kind == Get || seen || op.Kind == Submit && ok && op.Call.After(t) ||
			op.Kind == Deliver && !stored.IsZero() && op.Call.After(stored)
	})
}
