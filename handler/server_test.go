package handler

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

func TestReadinessProbe(t *testing.T) {
	srv := httptest.NewServer(NewServer(Config{Processor: &orders.Processor{Store: unreachableStore(t)}}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET / = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
