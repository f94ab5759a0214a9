package bench

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

type answering struct {
	status int
	charge string
}

func (a answering) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	if a.charge != "" {
		rec.Header().Set("x-ms-request-charge", a.charge)
	}
	rec.WriteHeader(a.status)
	return rec.Result(), nil
}

// TestCounterSumsRequestCharge: the charge of every answer counts, a
// conflict's too, and a snapshot starts the sum again.
func TestCounterSumsRequestCharge(t *testing.T) {
	send := func(rt http.RoundTripper, method, path string) {
		req := httptest.NewRequest(method, "http://cosmos.test"+path, nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	c := NewCounter(answering{http.StatusCreated, "5.71"})
	send(c, http.MethodPost, "/dbs/shop/colls/keys/docs")
	c.Next = answering{http.StatusConflict, "1.24"}
	send(c, http.MethodPost, "/dbs/shop/colls/keys/docs")
	c.Next = answering{http.StatusOK, ""}
	send(c, http.MethodGet, "/dbs/shop/colls/keys/docs/k1")
	got := c.Snapshot()
	if got.Charge() != 6.95 || got.Item() != 3 || got.Detail(1) != "create 201 ×1, create 409 ×1, read 200 ×1" {
		t.Errorf("charge %.3f RU, %d requests (%s); want 6.950 RU, 3 requests", got.Charge(), got.Item(), got.Detail(1))
	}
	if again := c.Snapshot(); again.Charge() != 0 || again.Item() != 0 {
		t.Errorf("after a snapshot: %.3f RU, %d requests; want none", again.Charge(), again.Item())
	}
}
