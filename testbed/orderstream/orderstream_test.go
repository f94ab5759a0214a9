package orderstream

import (
	"bytes"
	"cmp"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/producer"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

func TestGenerateIsWhatItSays(t *testing.T) {
	opts := DefaultOptions()
	opts.Orders = 1000
	s, err := Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	in := s.Injected
	if in.Orders != 1000 || in.Duplicates != 200 || in.Bursts != 20 || in.Mismatches != 10 || in.Invalid != 5 {
		t.Errorf("injected %+v", in)
	}
	if want := in.Orders + in.Duplicates + in.BurstCopies + in.Mismatches + in.Invalid; len(s.Messages) != want {
		t.Errorf("%d messages, want %d", len(s.Messages), want)
	}

	contents := map[string]map[string]bool{} // orderId -> contents
	invalid := 0
	for _, m := range s.Messages {
		c := Classify(m)
		if !c.Valid {
			invalid++
			if !strings.HasPrefix(c.OrderID, "BAD-") && c.OrderID != "" {
				t.Errorf("invalid message has a valid order's id %q: %s", c.OrderID, m.Body)
			}
			continue
		}
		if m.MessageID != producer.MessageID(c.OrderID, m.Body) || m.ContentType != "application/json" {
			t.Errorf("message %s: MessageId or content type wrong for order %s", m.MessageID, c.OrderID)
		}
		if contents[c.OrderID] == nil {
			contents[c.OrderID] = map[string]bool{}
		}
		contents[c.OrderID][c.Content] = true
		var o struct{ Total any }
		if err := json.Unmarshal(m.Body, &o); err != nil {
			t.Fatal(err)
		}
		if _, ok := o.Total.(string); !ok {
			t.Errorf("total is not a decimal string: %s", m.Body)
		}
	}
	if invalid != in.Invalid {
		t.Errorf("%d messages classified invalid, want the %d injected", invalid, in.Invalid)
	}
	twoContents := 0
	for _, cs := range contents {
		if len(cs) == 2 {
			twoContents++
		}
	}
	if len(contents) != in.Orders || twoContents != in.Mismatches {
		t.Errorf("%d order ids, %d with two contents; want %d and %d (duplicates must keep the fingerprint)",
			len(contents), twoContents, in.Orders, in.Mismatches)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	opts := DefaultOptions()
	opts.Orders = 300
	a, errA := Generate(opts)
	b, errB := Generate(opts)
	opts.Seed++
	c, errC := Generate(opts)
	if err := cmp.Or(errA, errB, errC); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave two streams")
	}
	if reflect.DeepEqual(a.Messages, c.Messages) {
		t.Error("another seed gave the same stream")
	}
}

func TestStreamFileRoundTrip(t *testing.T) {
	text := "not json\nat all"
	msgs := []*hostemu.Message{
		{MessageID: "A", Body: []byte(`{"orderId":"A","note":"<&>"}`), ContentType: "application/json",
			ApplicationProperties: json.RawMessage(`{"tenant":"contoso"}`), Burst: 1, LoseCompletions: 1},
		{MessageID: "A", Body: []byte("{\n  \"orderId\": \"A\"\n}"), Burst: 1},
		{MessageID: "B", Body: []byte(`{"orderId": "B"}`), Subject: "order.created", CorrelationID: "c"},
		{MessageID: "C", Body: []byte(text)},
		{MessageID: "D", Body: []byte{0xff, 0xfe}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, msgs); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, msgs) {
		for i := range got {
			t.Logf("%d: %+v\n   %+v", i, *got[i], *msgs[i])
		}
		t.Error("the stream changed in the round trip")
	}
}

func TestReadRejectsAmbiguousBodies(t *testing.T) {
	for _, line := range []string{
		`{"messageId":"A"}`,
		`{"messageId":"A","body":{},"bodyText":"{}"}`,
		`{"messageId":"A","body":{},"applicationProperties":[1]}`,
	} {
		if _, err := Read(strings.NewReader(line)); err == nil {
			t.Errorf("Read(%s) succeeded, want an error", line)
		}
	}
}
