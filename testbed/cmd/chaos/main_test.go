package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/testbed/chaos"
	"github.com/ordersink/orders-consumer/testbed/faults"
)

func TestParseRates(t *testing.T) {
	r, err := parseRates(formatRates(chaos.DefaultRates))
	if err != nil || r != chaos.DefaultRates {
		t.Errorf("round trip of the defaults: %v, %v", r, err)
	}
	r, err = parseRates("lost-answer=0.5, slow=0.1")
	if err != nil || r[faults.LostAnswer] != 0.5 || r[faults.Slow] != 0.1 || r.Total() != 0.6 {
		t.Errorf("parseRates: %v, %v", r, err)
	}
	for _, bad := range []string{"lost=0.1", "slow", "slow=x", "slow=0.7,dropped=0.7", "slow=-1"} {
		if _, err := parseRates(bad); err == nil {
			t.Errorf("parseRates(%q) accepted", bad)
		}
	}
}

func TestParseRange(t *testing.T) {
	lo, hi, err := parseRange("200ms-4s")
	if err != nil || lo != 200*time.Millisecond || hi != 4*time.Second {
		t.Errorf("parseRange: %v %v %v", lo, hi, err)
	}
	for _, bad := range []string{"4s", "4s-200ms", "a-b"} {
		if _, _, err := parseRange(bad); err == nil {
			t.Errorf("parseRange(%q) accepted", bad)
		}
	}
}

func TestRunNeedsAnEndpoint(t *testing.T) {
	var out, errs bytes.Buffer
	err := run(context.Background(), nil, func(string) string { return "" }, &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "COSMOS_ENDPOINT") {
		t.Errorf("run without COSMOS_ENDPOINT: %v", err)
	}
}
