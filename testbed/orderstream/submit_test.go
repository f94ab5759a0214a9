package orderstream

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/internal/hostjson"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

func TestGenerateSubmissionsIsWhatItSays(t *testing.T) {
	opts := DefaultSubmitOptions()
	subs, in, err := GenerateSubmissions(opts)
	if err != nil {
		t.Fatal(err)
	}
	if in.Orders != 200 || in.Keys != 220 || len(subs) != 210 || in.Timeouts != 20 || in.Concurrent != 10 || in.Reused != 10 ||
		in.NewKeys != 10 || in.Races != 10 {
		t.Fatalf("injected %+v, %d submissions", in, len(subs))
	}
	again, _, _ := GenerateSubmissions(opts)
	if !reflect.DeepEqual(subs, again) {
		t.Error("the same options gave other submissions")
	}
	keys, orders := map[string]bool{}, map[string]int{}
	for _, s := range subs {
		if keys[s.Key] {
			t.Errorf("key %s used by two submissions", s.Key)
		}
		keys[s.Key] = true
		orders[s.OrderID]++
		c := Classify(&hostemu.Message{Body: s.Body})
		if !c.Valid || c.OrderID != s.OrderID || s.Copies < 1 || s.At < 0 || s.At > 1 {
			t.Errorf("submission %+v: valid %v", s, c.Valid)
		}
		if s.Reuse != nil {
			r := Classify(&hostemu.Message{Body: s.Reuse})
			if !r.Valid || r.OrderID != s.OrderID || r.Content == c.Content {
				t.Errorf("reused key %s: the other payload must be a valid order with the same id and other content", s.Key)
			}
		}
		if r := s.Rival; r != nil {
			rc := Classify(&hostemu.Message{Body: r.Body})
			if s.Client != ClientA || r.Client != ClientB || !rc.Valid || rc.OrderID != s.OrderID || rc.Content == c.Content || keys[r.Key] {
				t.Errorf("race for %s: the rival must be another client's valid order with the same id, other content and a key of its own", s.OrderID)
			}
			keys[r.Key] = true
		}
	}
	twice := 0
	for _, n := range orders {
		if n == 2 {
			twice++
		}
	}
	if twice != in.NewKeys {
		t.Errorf("%d orders under two keys, want %d", twice, in.NewKeys)
	}
	for _, s := range subs {
		if s.Rival != nil && orders[s.OrderID] > 1 {
			t.Errorf("order %s is raced and also submitted again under a new key: the resend may come first and end the race", s.OrderID)
		}
	}
	// Every seed: races and resends never share an order.
	for seed := range uint64(200) {
		o := DefaultSubmitOptions()
		o.Seed, o.Races, o.NewKeys, o.Edge = seed, 0.3, 0.3, 0 // edge bodies are slow to build and beside the point
		subs, in, err := GenerateSubmissions(o)
		if err != nil {
			t.Fatal(err)
		}
		raced := map[string]bool{}
		for _, s := range subs {
			if s.Rival != nil {
				raced[s.OrderID] = true
			}
		}
		if in.NewKeys != 60 || len(subs) != 260 {
			t.Fatalf("seed %d: %d resends, %d submissions; want 60 and 260", seed, in.NewKeys, len(subs))
		}
		for _, s := range subs[200:] {
			if raced[s.OrderID] {
				t.Fatalf("seed %d: raced order %s submitted again under a new key", seed, s.OrderID)
			}
		}
	}
	if _, _, err := GenerateSubmissions(SubmitOptions{Orders: 10, Reused: 2}); err == nil {
		t.Error("a rate over 1 was accepted")
	}
}

// A requeued message is read as the consumer reads it, from the text the
// host sends (Newtonsoft's indented form).
func TestUnwrap(t *testing.T) {
	body := []byte(`{"orderId":"WEB-1","total":"19.90"}`)
	for name, env := range map[string]map[string]any{
		"text":   {"body": string(body), "messageId": "WEB-1:abc", "subject": "OrderPlaced", "deliveries": 0},
		"base64": {"body": base64.StdEncoding.EncodeToString(body), "bodyEncoding": "base64", "messageId": "WEB-1:abc", "subject": "OrderPlaced"},
	} {
		t.Run(name, func(t *testing.T) {
			raw, _ := json.Marshal(map[string]any{"orderConsumerRequeued": env})
			text, err := hostjson.Indent(raw)
			if err != nil {
				t.Fatal(err)
			}
			m, ok := Unwrap(&hostemu.Message{Body: text, MessageID: "guid", ContentType: "text/plain"})
			if !ok || !bytes.Equal(m.Body, body) || m.MessageID != "WEB-1:abc" || m.Subject != "OrderPlaced" || m.ContentType != "text/plain" {
				t.Errorf("unwrapped %+v, ok %v", m, ok)
			}
		})
	}
	for _, body := range []string{`{"orderId":"A"}`, `not json`, `{"orderConsumerRequeued":{"body":"x"}}`} {
		if _, ok := Unwrap(&hostemu.Message{Body: []byte(body)}); ok {
			t.Errorf("%s was read as a requeued message", body)
		}
	}
}

// The fall-back's queue copy is the submission's order (its fingerprint,
// another meta), placed just before the submission starts; an order at the
// event size edge fits its budget to the byte, and one byte more does not.
func TestFallbacksAndOrdersAtTheEdge(t *testing.T) {
	opts := DefaultSubmitOptions()
	subs, in, err := GenerateSubmissions(opts)
	if err != nil {
		t.Fatal(err)
	}
	if in.Fallbacks == 0 || in.Edge != 4 {
		t.Fatalf("injected %+v: want fall-backs and 4 orders at the edge", in)
	}
	stream := []*hostemu.Message{{Body: []byte(`{}`)}, {Body: []byte(`{}`)}}
	msgs := WithFallbacks(stream, subs)
	fallbacks, edges := 0, map[string]bool{}
	for _, s := range subs {
		if s.Fallback {
			fallbacks++
			found := 0
			for _, m := range msgs {
				if c := Classify(m); c.Valid && c.OrderID == s.OrderID {
					found++
					if c.Content != ContentKey(s.Body) || bytes.Equal(m.Body, s.Body) {
						t.Errorf("%s: the queue copy has content %s (body equal: %v), the submission %s", s.OrderID, c.Content, bytes.Equal(m.Body, s.Body), ContentKey(s.Body))
					}
				}
			}
			if found != 1 {
				t.Errorf("%s: %d queue copies, want 1", s.OrderID, found)
			}
		}
		if !s.Edge {
			continue
		}
		edges[s.OrderID] = true
		if s.Fallback {
			t.Errorf("%s: an order at the edge is too large to be put on the queue", s.OrderID)
		}
		if fits, err := eventFits(s.Body, handler.DefaultMaxMessageBytes, time.Now()); err != nil || !fits {
			t.Errorf("%s: its event does not fit (%v)", s.OrderID, err)
		}
		over := bytes.Replace(s.Body, []byte(`x"]`), []byte(`xx"]`), 1)
		if fits, err := eventFits(over, handler.DefaultMaxMessageBytes, time.Now()); err != nil || fits {
			t.Errorf("%s: one byte more still fits (%v)", s.OrderID, err)
		}
	}
	if len(msgs) != len(stream)+fallbacks || len(edges) != in.Edge || fallbacks != in.Fallbacks {
		t.Errorf("%d messages from %d and %d fall-backs; %d orders at the edge of %d", len(msgs), len(stream), fallbacks, len(edges), in.Edge)
	}
}
