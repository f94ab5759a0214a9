package chaos

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The read-back depends on the product's promises, not on how fast the
// store answers: a GET that takes longer than a second is waited for, an
// order that is never accepted does not use up the patience of the next,
// and a GET answered 503 to the end (the store missed SUBMIT_DEADLINE) is
// named, not judged.
func TestReadBackWaitsForTheHandlersDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/api/orders/")
		switch id {
		case "W-0": // never stored within the patience
			fmt.Fprint(w, `{"state":"submitted"}`)
		case "W-1": // a loaded store: 1.5 s per answer
			time.Sleep(1500 * time.Millisecond)
			fmt.Fprintf(w, `{"orderId":%q,"state":"accepted","requestHash":"sha256:aa"}`, id)
		default: // the store never answers within the handler's deadline
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	l := NewSubmitLedger(nil)
	for i := range 3 {
		l.book(Answer{Key: fmt.Sprint("k", i), OrderID: fmt.Sprintf("W-%d", i), Status: 202})
	}
	l.ReadBack(context.Background(), srv.URL, SubmitConfig{}, 3, 2*time.Second)
	views := l.Views()
	if len(views) != 3 {
		t.Fatalf("views %+v, want 3", views)
	}
	if v := views[1]; v.State != "accepted" {
		t.Errorf("the slow GET: %+v, want accepted after 1.5 s", v)
	}
	c := ReadBackCheck(views, map[string]string{"W-0": "sha256:bb", "W-1": "sha256:aa", "W-2": "sha256:cc"})
	if c.Checked != 2 || len(c.Violations) != 1 || !strings.Contains(c.Violations[0], "W-0") {
		t.Errorf("checked %d, violations %q: want W-0 still submitted, W-1 accepted, W-2 not judged", c.Checked, c.Violations)
	}
	if !strings.Contains(c.Name, "1 not judged: answered 503") {
		t.Errorf("check %q does not name the GET answered 503", c.Name)
	}
}
