package handler

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
)

// Every field docs/contract.md lists (and the ones the runbook's resubmission
// relies on) is asserted here by name on the JSON the host receives, not on a
// decoded struct that would hide a renamed or dropped member.

// parkedFields decodes Outputs.parking as the generic object the parking
// queue's readers see.
func (a answer) parkedFields(t *testing.T) map[string]any {
	t.Helper()
	raw, ok := a.Outputs[ParkingBinding]
	if !ok {
		t.Fatalf("nothing parked; logs %v", a.Logs)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("parking output is not an object: %s", raw)
	}
	return m
}

// wantFields checks each named member's value; a nil want means "present,
// any value", absent means the member must be left out.
func wantFields(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		v, ok := got[k]
		switch {
		case w == absent && ok:
			t.Errorf("%s has %s = %v, want it left out", what, k, v)
		case w == absent:
		case !ok:
			t.Errorf("%s lacks %s: %v", what, k, got)
		case w != nil && mustJSON(v) != mustJSON(w):
			t.Errorf("%s %s = %v, want %v", what, k, v, w)
		}
	}
}

// absent marks a member that must not be there.
var absent = &struct{ absent bool }{true}

func TestParkingEnvelopeFieldsOfAMismatch(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	id, body := s.created(t)
	stored := storedOrder(t, id)
	other := mismatchOf(body)
	a := s.invoke(t, withSubject(t, hostInvocation(other, id, 2), "OrderPlaced"))
	if a.Status != http.StatusOK {
		t.Fatalf("status %d", a.Status)
	}
	e := a.parkedFields(t)
	wantFields(t, "envelope", e, map[string]any{
		"reason":          string(orders.HashMismatch),
		"description":     nil,
		"orderId":         id,
		"messageId":       id,
		"subject":         "OrderPlaced",
		"deliveryCount":   2,
		"storedHash":      stored["requestHash"],
		"incomingHash":    nil,
		"body":            string(other),
		"bodyEncoding":    absent,
		"enqueuedTimeUtc": "2026-11-29T10:00:02Z", // the host's zone-less UTC, made explicit
		"parkedAt":        nil,
		"function":        FunctionProcessOrder,
		"invocationId":    a.InvocationID,
		"truncated":       absent,
	})
	if h, _ := e["incomingHash"].(string); !strings.HasPrefix(h, "sha256:") || h == stored["requestHash"] {
		t.Errorf("incomingHash %q, want the other body's sha256", h)
	}
	if p, _ := e["parkedAt"].(string); !parsesAsTime(p) {
		t.Errorf("parkedAt %q is not an RFC 3339 time", p)
	}

	t.Run("conflict record", func(t *testing.T) {
		records := handlertest.DocumentsOfType(partition(t, id), orders.TypeConflict)
		if len(records) != 1 {
			t.Fatalf("conflict records = %d, want 1", len(records))
		}
		c := records[0]
		wantFields(t, "conflict record", c, map[string]any{
			"orderId":      id,
			"type":         orders.TypeConflict,
			"messageId":    id,
			"storedHash":   stored["requestHash"],
			"incomingHash": e["incomingHash"],
			"body":         string(other),
			"detectedAt":   nil,
			"ttl":          orders.ConflictTTL,
		})
		if cid, _ := c["id"].(string); !strings.HasPrefix(cid, id+":conflict:") {
			t.Errorf("conflict record id %q, want %s:conflict:…", cid, id)
		}
		if d, _ := c["detectedAt"].(string); !parsesAsTime(d) {
			t.Errorf("detectedAt %q is not an RFC 3339 time", d)
		}
	})
}

// A body that is not UTF-8 cannot travel as JSON text: the envelope carries
// it as base64 and says so, so resubmission gets every byte back.
func TestParkingEnvelopeKeepsTheBytesOfANonUTF8Body(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	id, body := handlertest.UniqueOrder(t)
	latin1 := bytes.Replace(body, []byte("CUST-42"), []byte("CUST-\xe942"), 1) // é in ISO 8859-1
	a := s.invoke(t, hostInvocation(latin1, id, 1))
	if a.Status != http.StatusOK {
		t.Fatalf("status %d", a.Status)
	}
	e := a.parkedFields(t)
	wantFields(t, "envelope", e, map[string]any{
		"reason":       string(orders.MalformedMessage),
		"bodyEncoding": "base64",
		"messageId":    id,
		"subject":      absent, // no Subject on the message
	})
	got, err := base64.StdEncoding.DecodeString(fmt.Sprint(e["body"]))
	if err != nil || !bytes.Equal(got, latin1) {
		t.Errorf("body %q decodes to %q (err %v), want the original bytes", e["body"], got, err)
	}
	if docs := partition(t, id); len(docs) != 0 {
		t.Errorf("a non-UTF-8 body wrote %d documents", len(docs))
	}
}

func parsesAsTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// §6: the envelope keeps the original body as text, white space included:
// a blank body encoded once (the docs' shape, single-single-encoded.json) is
// not taken for an empty base64 text.
func TestParkingEnvelopeKeepsABlankBody(t *testing.T) {
	s := startServer(t, testEnv(t).Store, 0)
	blank := " \n\t "
	var inv map[string]map[string]json.RawMessage
	if err := json.Unmarshal(hostInvocation(nil, "blank-body", 1), &inv); err != nil {
		t.Fatal(err)
	}
	inv["Data"][TriggerBinding] = json.RawMessage(handlertest.Enc(blank))
	request, _ := json.Marshal(inv)
	a := s.invoke(t, request)
	if a.Status != http.StatusOK {
		t.Fatalf("status %d", a.Status)
	}
	wantFields(t, "envelope", a.parkedFields(t), map[string]any{
		"reason":       string(orders.MalformedMessage),
		"body":         blank,
		"bodyEncoding": absent,
		"messageId":    "blank-body",
	})
}
