package handler

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

// TestDepthLimitHoldsForObjectsAsForArrays: docs/contract.md §3 bounds
// nesting, objects and arrays alike (the body's own object is level 1).
// Through the real handler and Cosmos: 32 levels are created, 33 are parked
// as MalformedMessage naming the depth limit, whether the levels are
// objects, arrays or both.
func TestDepthLimitHoldsForObjectsAsForArrays(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	objects := func(levels int) string {
		return strings.Repeat(`{"a":`, levels-1) + "{}" + strings.Repeat("}", levels-1)
	}
	// mixed alternates objects and arrays, levels of them.
	var mixed func(levels int) string
	mixed = func(levels int) string {
		switch {
		case levels == 1:
			return "[]"
		case levels%2 == 0:
			return `{"a":` + mixed(levels-1) + "}"
		}
		return "[" + mixed(levels-1) + "]"
	}
	// "x" is a member of the body's object: its value starts at level 2.
	for _, tc := range []struct {
		name, member string
		parked       bool
	}{
		{"objects, 32 levels", `"x":` + objects(orders.MaxDepth-1), false},
		{"objects, 33 levels", `"x":` + objects(orders.MaxDepth), true},
		{"objects and arrays, 32 levels", `"x":` + mixed(orders.MaxDepth-1), false},
		{"objects and arrays, 33 levels", `"x":` + mixed(orders.MaxDepth), true},
		{"an object at level 33 in arrays", `"x":` + strings.Repeat("[", orders.MaxDepth-1) + "{}" + strings.Repeat("]", orders.MaxDepth-1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, body := uniqueOrder(t)
			a := s.invoke(t, hostInvocation(withMember(body, tc.member), id, 1))
			e := a.parked(t)
			if a.Status != http.StatusOK {
				t.Fatalf("status %d, want 200", a.Status)
			}
			docs := documentsOfType(partition(t, id), orders.TypeOrder)
			if !tc.parked {
				if e != nil || len(docs) != 1 {
					t.Fatalf("parked %s, %d orders stored; want created", describe(e), len(docs))
				}
				return
			}
			if e == nil || e.Reason != orders.MalformedMessage || !strings.Contains(e.Description, "depth limit") {
				t.Fatalf("parked %s, want MalformedMessage naming the depth limit", describe(e))
			}
			if len(docs) != 0 {
				t.Errorf("a refused body wrote %d orders", len(docs))
			}
		})
	}
}
