package history

import (
	"path/filepath"
	"testing"
	"time"
)

// at builds operations on a test clock: each op spans [call, ret] in ms.
func at(call, ret int, in Input, out Output) Op {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	return Op{Input: in, Output: out, Call: t0.Add(time.Duration(call) * time.Millisecond), Return: t0.Add(time.Duration(ret) * time.Millisecond)}
}

func post(client, key, hash string) Input {
	return Input{Kind: Submit, OrderID: "ORD-1", Client: client, Key: key, Hash: hash}
}

func get(client string) Input { return Input{Kind: Get, OrderID: "ORD-1", Client: client} }

func deliver(hash string) Input { return Input{Kind: Deliver, OrderID: "ORD-1", Hash: hash} }

var (
	unknown = Output{Unknown: true}
	created = Output{Status: 201, Body: "view1"}
)

// Histories the contract allows, each with an answer lost or a process
// killed somewhere: the checker must accept them.
func TestLinearizableHistories(t *testing.T) {
	for name, ops := range map[string][]Op{
		"lost answer, then the replay": {
			at(0, 10, post("a", "k1", "h1"), unknown),
			at(20, 30, post("a", "k1", "h1"), Output{Status: 201, Body: "view1", Replayed: true}),
			at(40, 50, get("a"), Output{Status: 200, Body: "view1"}),
		},
		"killed after the batch, taken over and resumed": {
			at(0, 10, post("a", "k1", "h1"), Output{Status: 500}),
			at(5, 6, get("a"), Output{Status: 404}),
			at(20, 30, post("a", "k1", "h1"), created),
			at(40, 50, post("a", "k1", "h1"), Output{Status: 201, Body: "view1", Replayed: true}),
		},
		"released after a late batch, then claimed again and resumed": {
			at(0, 10, post("a", "k1", "h1"), Output{Status: 503, Unknown: true}),
			at(20, 30, post("a", "k1", "h1"), created),
		},
		"race: one 201, one 409 order-id-taken, GET by owner and the other": {
			at(0, 10, post("a", "k1", "h1"), created),
			at(0, 10, post("b", "k2", "h2"), Output{Status: 409, Outcome: OrderIDTaken, Body: "p1"}),
			at(20, 30, get("b"), Output{Status: 404}),
			at(20, 30, get("a"), Output{Status: 200, Body: "view1"}),
			at(40, 50, post("b", "k2", "h2"), Output{Status: 409, Outcome: OrderIDTaken, Body: "p1", Replayed: true}),
		},
		"resent under a new key whose first answer was lost": {
			at(0, 10, post("a", "k1", "h1"), created),
			at(20, 30, post("a", "k2", "h1"), unknown),
			at(40, 50, post("a", "k2", "h1"), Output{Status: 200, Body: "view1", Replayed: true}),
		},
		"resent under a new key, reused key refused": {
			at(0, 10, post("a", "k1", "h1"), created),
			at(20, 30, post("a", "k2", "h1"), Output{Status: 200, Body: "view1"}),
			at(40, 50, post("a", "k1", "h9"), Output{Status: 422, Outcome: KeyReused}),
		},
		"the fall-back: the queue stored it, the API answers its receipt, GET 404": {
			at(0, 10, deliver("h1"), Output{Outcome: Created}),
			at(20, 30, post("a", "k1", "h1"), Output{Status: 200, Outcome: Receipt, Body: "r1"}),
			at(40, 50, post("a", "k1", "h1"), Output{Status: 200, Outcome: Receipt, Body: "r1", Replayed: true}),
			at(60, 70, get("a"), Output{Status: 404}),
		},
		"the fall-back: the API stored it first, the queue's copy is a duplicate": {
			at(0, 10, post("a", "k1", "h1"), created),
			at(20, 30, deliver("h1"), Output{Outcome: Duplicate}),
		},
		"a refusal of the rules is the key's answer, replayed": {
			at(0, 10, post("a", "k1", "h1"), Output{Status: 422, Outcome: InvalidOrder, Body: "p1"}),
			at(20, 30, post("a", "k1", "h1"), Output{Status: 422, Outcome: InvalidOrder, Body: "p1", Replayed: true}),
		},
		"queue: a create whose answer was lost, retried in the delivery, meets its own order": {
			at(0, 10, deliver("h1"), Output{Outcome: Duplicate}),
			at(20, 30, deliver("h1"), Output{Outcome: Duplicate}),
		},
		"queue: created, duplicate, mismatch, a failed delivery, the event": {
			at(0, 100, deliver("h1"), unknown),
			at(10, 20, deliver("h1"), Output{Outcome: Duplicate}),
			at(30, 40, deliver("h2"), Output{Outcome: Mismatch}),
			at(35, 35, Input{Kind: Publish, OrderID: "ORD-1", Hash: "h1"}, Output{}),
		},
	} {
		t.Run(name, func(t *testing.T) {
			if r := Check(ops, time.Second, ""); len(r.Illegal)+len(r.Undecided) != 0 {
				t.Errorf("illegal %v, undecided %v; want the history accepted", r.Illegal, r.Undecided)
			}
		})
	}
}

// A client retrying through an outage sends dozens of attempts nobody
// answers: checked in moments, not given up on.
func TestManyUnansweredAttemptsAreCheckedAtOnce(t *testing.T) {
	var ops []Op
	for i := range 40 {
		ops = append(ops, at(i*1000, i*1000+900, post("a", "k1", "h1"), unknown))
	}
	ops = append(ops, at(41000, 41010, post("a", "k1", "h1"), Output{Status: 201, Body: "view1", Replayed: true}),
		at(41020, 41030, get("a"), Output{Status: 200, Body: "view2"}))
	if r := Check(ops, 5*time.Second, ""); len(r.Illegal) != 1 || len(r.Undecided) != 0 {
		t.Errorf("illegal %v, undecided %v; want the GET's other view found illegal", r.Illegal, r.Undecided)
	}
}

// Histories every end-state check accepts (the order is stored once, with
// its owner and fingerprint; every answer a client saw twice is the same)
// but no sequential order explains: the checker must refuse each, and draw
// it.
func TestHistoriesTheEndStateMisses(t *testing.T) {
	for name, ops := range map[string][]Op{
		"GET 404 after the 201 (a stale read)": {
			at(0, 10, post("a", "k1", "h1"), created),
			at(20, 30, get("a"), Output{Status: 404}),
		},
		"GET 200 before the POST was sent (answered before it was durable)": {
			at(0, 5, get("a"), Output{Status: 200, Body: "view1"}),
			at(10, 20, post("a", "k1", "h1"), created),
		},
		"a replay unlike the answer the first request got, which was lost": {
			at(0, 10, post("a", "k1", "h1"), unknown),
			at(20, 30, get("a"), Output{Status: 200, Body: "view1"}),
			at(40, 50, post("a", "k1", "h1"), Output{Status: 201, Body: "view2", Replayed: true}),
		},
		"two executions of one key": {
			at(0, 10, post("a", "k1", "h1"), created),
			at(20, 30, post("a", "k1", "h1"), created),
		},
		"409 order-id-taken for the content stored (the fall-back told to use another orderId)": {
			at(0, 10, deliver("h1"), Output{Outcome: Created}),
			at(20, 30, post("a", "k1", "h1"), Output{Status: 409, Outcome: OrderIDTaken, Body: "p1"}),
		},
		"a receipt for other content": {
			at(0, 10, deliver("h1"), Output{Outcome: Created}),
			at(20, 30, post("a", "k1", "h2"), Output{Status: 200, Outcome: Receipt, Body: "r1"}),
		},
		"a refusal of the rules for the content stored": {
			at(0, 10, post("a", "k1", "h1"), created),
			at(20, 30, post("a", "k2", "h1"), Output{Status: 422, Outcome: InvalidOrder, Body: "p1"}),
		},
		"an event before its order": {
			at(0, 0, Input{Kind: Publish, OrderID: "ORD-1", Hash: "h1"}, Output{}),
			at(10, 20, deliver("h1"), Output{Outcome: Created}),
		},
		"a duplicate judged before the order existed": {
			at(0, 10, deliver("h1"), Output{Outcome: Duplicate}),
			at(20, 30, deliver("h1"), Output{Outcome: Created}),
		},
	} {
		t.Run(name, func(t *testing.T) {
			html := filepath.Join(t.TempDir(), "history.html")
			r := Check(ops, time.Second, html)
			if len(r.Illegal) != 1 || r.Illegal[0] != "ORD-1" {
				t.Fatalf("illegal %v; want ORD-1", r.Illegal)
			}
			if r.Visualisation != html || r.VisualisationErr != nil {
				t.Errorf("visualisation %q, %v; want %s", r.Visualisation, r.VisualisationErr, html)
			}
		})
	}
}

func TestResultNamesItsCost(t *testing.T) {
	r := Check([]Op{at(0, 10, post("a", "k1", "h1"), created), at(0, 1, Input{Kind: Get, OrderID: "ORD-2", Client: "a"}, Output{Status: 404})}, time.Second, "")
	if r.Ops != 2 || r.Partitions != 2 || r.Took <= 0 {
		t.Errorf("result %+v, want 2 operations in 2 orderIds and the time taken", r)
	}
}
