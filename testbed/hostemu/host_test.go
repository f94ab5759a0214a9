package hostemu

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeFunction is the fake handler's Service Bus function, served in
// process or by the test binary run as a handler (fakeHandler). It answers
// each invocation as the MessageId of its (first) message says,
// "<mode>-<name>": ok and textjson succeed; status500, textplain, empty,
// null, invalid, array and hangup fail, each as a handler can; flaky fails
// the first two deliveries (503, no body). A body that is not an
// invocation is answered 400. At the first delivery only, sleep<duration>
// answers after that long (sleepy), exit0 and exit200 end the process with
// that code (only in the process run as the handler: in the test's own
// process they are answered 400, as is a sleep that does not parse). Any
// other message succeeds.
func fakeFunction(w http.ResponseWriter, r *http.Request) {
	var inv struct{ Metadata map[string]json.RawMessage }
	if err := json.NewDecoder(r.Body).Decode(&inv); err != nil {
		// Not an invocation: the test sees it fail, whatever it expected.
		http.Error(w, "request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	id, count := firstMessage(inv.Metadata)
	mode, _, _ := strings.Cut(id, "-")
	if d, ok := strings.CutPrefix(mode, "sleep"); ok && count == 1 {
		sleep, err := time.ParseDuration(d)
		if err != nil {
			http.Error(w, "message "+id+": "+err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(sleep)
	}
	answer := func(contentType, body string) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		_, _ = w.Write([]byte(body))
	}
	switch {
	case (mode == "exit0" || mode == "exit200") && os.Getenv("HOSTEMU_FAKE_HANDLER") == "":
		// Served in the test's own process: exiting would end the test binary.
		http.Error(w, "message "+id+": exits only in a process run as the handler", http.StatusBadRequest)
	case mode == "exit0" && count == 1:
		os.Exit(0)
	case mode == "exit200" && count == 1:
		os.Exit(200)
	case mode == "flaky" && count <= 2:
		w.WriteHeader(http.StatusServiceUnavailable) // no body, as a proxy in front may answer
	case mode == "status500":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		answer("", `{"Outputs":{},"Logs":[]}`)
	case mode == "textplain":
		answer("", `{"Outputs":{},"Logs":[],"ReturnValue":null}`) // what Go sends for a JSON body when the header is not set
	case mode == "empty":
		answer("application/json", "")
	case mode == "null":
		answer("application/json", "null")
	case mode == "invalid":
		answer("application/json", `{"Outputs":`)
	case mode == "array":
		answer("application/json", `[]`)
	case mode == "hangup":
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	case mode == "textjson":
		answer("text/json", `{"Outputs":{},"Logs":["done `+id+`"],"ReturnValue":null}`)
	default:
		answer("application/json; charset=utf-8", `{"Outputs":{},"Logs":["done `+id+`"],"ReturnValue":null}`)
	}
}

// sleepy is the MessageId of a message whose first delivery fakeFunction
// answers after d.
func sleepy(d time.Duration, name string) string { return "sleep" + d.String() + "-" + name }

// firstMessage is the MessageId and DeliveryCount of an invocation's
// (first) message, single or batch.
func firstMessage(md map[string]json.RawMessage) (id string, count int) {
	var s string
	if _, single := md["MessageId"]; single {
		_ = json.Unmarshal(md["DeliveryCount"], &s)
		count, _ = strconv.Atoi(s)
		_ = json.Unmarshal(md["MessageId"], &s)
		_ = json.Unmarshal([]byte(s), &id)
		return id, count
	}
	var ids []string
	var counts []int
	_ = json.Unmarshal(md["MessageIdArray"], &s)
	_ = json.Unmarshal([]byte(s), &ids)
	_ = json.Unmarshal(md["DeliveryCountArray"], &s)
	_ = json.Unmarshal([]byte(s), &counts)
	if len(ids) == 0 || len(counts) == 0 {
		return "", 0
	}
	return ids[0], counts[0]
}

func singleFunction() *Function {
	return &Function{Name: "ProcessOrder", Bindings: []Binding{
		{Name: "message", Type: "serviceBusTrigger", Direction: "in", QueueName: "orders"},
		{Name: "parking", Type: "serviceBus", Direction: "out", QueueName: "orders-deadletter"},
	}}
}

func batchFunction() *Function {
	return &Function{Name: "ProcessOrderBatch", Bindings: []Binding{
		{Name: "messages", Type: "serviceBusTrigger", Direction: "in", QueueName: "orders", Cardinality: "many", DataType: "string"},
	}}
}

type recorder struct {
	mu   sync.Mutex
	invs []*Invocation
}

func (r *recorder) observe(inv *Invocation) { r.mu.Lock(); r.invs = append(r.invs, inv); r.mu.Unlock() }

// runHost delivers msgs to fn served by h and returns the invocations in the
// order they started.
func runHost(t *testing.T, h http.Handler, fn *Function, opts Options, msgs ...*Message) ([]*Invocation, *Queue) {
	t.Helper()
	q := NewQueue("orders", 0)
	q.Send(msgs...)
	return runQueue(t, httptestServer(t, h), fn, opts, q), q
}

// runQueue delivers q's messages to fn served at handler until q is drained.
func runQueue(t *testing.T, handler Endpointer, fn *Function, opts Options, q *Queue) []*Invocation {
	t.Helper()
	rec := &recorder{}
	opts.Functions, opts.Queue, opts.Handler, opts.Observe = []*Function{fn}, q, handler, rec.observe
	host, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := host.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// Observe runs after settling, so a redelivery may be observed before
	// the delivery that caused it; start times are in causal order.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	slices.SortStableFunc(rec.invs, func(a, b *Invocation) int { return a.Started.Compare(b.Started) })
	return rec.invs
}

func msg(id string) *Message {
	return &Message{MessageID: id, Body: []byte(`{"orderId":"` + id + `"}`), ContentType: "application/json"}
}

func TestSettlementOfFailedAnswers(t *testing.T) {
	tests := []struct {
		id       string
		protocol bool
	}{
		{"status500", false},
		{"hangup", false},
		{"textplain", true},
		{"empty", true},
		{"null", true},
		{"invalid", true},
		{"array", true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			invs, q := runHost(t, http.HandlerFunc(fakeFunction), singleFunction(), Options{}, msg(tt.id))
			if len(invs) != DefaultMaxDeliveryCount {
				t.Fatalf("%d invocations, want %d (one per delivery until the broker dead-letters)", len(invs), DefaultMaxDeliveryCount)
			}
			for i, inv := range invs {
				want := Abandoned
				if i == len(invs)-1 {
					want = DeadLettered
				}
				if inv.OK() || inv.Protocol != tt.protocol || inv.Deliveries[0].DeliveryCount != i+1 || inv.Settlements[0] != want {
					t.Errorf("invocation %d: ok=%v protocol=%v deliveryCount=%d settlement=%s (%s); want failed, protocol=%v, %d, %s",
						i, inv.OK(), inv.Protocol, inv.Deliveries[0].DeliveryCount, inv.Settlements[0], inv.Failure, tt.protocol, i+1, want)
				}
			}
			dl := q.DeadLetters()
			if len(dl) != 1 || dl[0].Reason != ReasonMaxDeliveryCountExceeded || dl[0].DeliveryCount != 10 {
				t.Errorf("dead letters = %+v, want one MaxDeliveryCountExceeded after 10 deliveries", dl)
			}
		})
	}
}

func TestSettlementOfSuccessAndRetries(t *testing.T) {
	invs, q := runHost(t, http.HandlerFunc(fakeFunction), singleFunction(), Options{}, msg("ok-1"), msg("textjson-1"), msg("flaky-1"))
	counts := map[string][]int{}
	for _, inv := range invs {
		d := inv.Deliveries[0]
		counts[d.Message.MessageID] = append(counts[d.Message.MessageID], d.DeliveryCount)
		if d.Message.MessageID != "flaky-1" || d.DeliveryCount == 3 {
			if !inv.OK() || inv.Settlements[0] != Completed || len(inv.Logs) != 1 {
				t.Errorf("%s delivery %d: ok=%v %s logs=%q (%s)", d.Message.MessageID, d.DeliveryCount, inv.OK(), inv.Settlements[0], inv.Logs, inv.Failure)
			}
		}
	}
	want := map[string][]int{"ok-1": {1}, "textjson-1": {1}, "flaky-1": {1, 2, 3}}
	for id, w := range want {
		if !slices.Equal(counts[id], w) {
			t.Errorf("%s delivery counts %v, want %v", id, counts[id], w)
		}
	}
	if c := q.Counts(); c.Completed != 3 || c.DeadLettered != 0 || c.Outstanding != 0 {
		t.Errorf("queue counts %+v", c)
	}
}

func TestLostCompletionRedelivers(t *testing.T) {
	m := msg("ok-lost")
	m.LoseCompletions = 1
	invs, _ := runHost(t, http.HandlerFunc(fakeFunction), singleFunction(), Options{}, m)
	if len(invs) != 2 || invs[0].Settlements[0] != CompletionLost || invs[1].Settlements[0] != Completed ||
		invs[1].Deliveries[0].DeliveryCount != 2 {
		for _, inv := range invs {
			t.Logf("delivery %d: %s", inv.Deliveries[0].DeliveryCount, inv.Settlements[0])
		}
		t.Fatal("want a successful delivery whose completion is lost, then delivery 2 completed")
	}
}

// callCounter numbers a handler's calls from 1, safely across goroutines.
type callCounter struct {
	mu sync.Mutex
	n  int
}

func (c *callCounter) next() int { c.mu.Lock(); defer c.mu.Unlock(); c.n++; return c.n }

func TestBatchSettlesAllOrNothing(t *testing.T) {
	var calls callCounter
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.next() == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	})
	invs, q := runHost(t, h, batchFunction(), Options{MaxMessageBatchSize: 10}, msg("a"), msg("b"), msg("c"))
	if len(invs) != 2 {
		t.Fatalf("%d invocations, want 2", len(invs))
	}
	for i, inv := range invs {
		for j, d := range inv.Deliveries {
			if d.DeliveryCount != i+1 || (i == 0) != (inv.Settlements[j] == Abandoned) {
				t.Errorf("batch %d message %s: delivery %d, %s", i, d.Message.MessageID, d.DeliveryCount, inv.Settlements[j])
			}
		}
		if len(inv.Deliveries) != 3 {
			t.Errorf("batch %d has %d messages, want all 3", i, len(inv.Deliveries))
		}
	}
	if c := q.Counts(); c.Completed != 3 {
		t.Errorf("completed %d, want 3", c.Completed)
	}
}

func TestBurstIsInFlightTogether(t *testing.T) {
	const n = 3
	arrived := make(chan struct{}, n)
	all := make(chan struct{})
	allArrived := sync.OnceFunc(func() { close(all) })
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		if len(arrived) == n {
			allArrived()
		}
		select {
		case <-all:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
		case <-time.After(5 * time.Second):
			w.WriteHeader(http.StatusGatewayTimeout)
		}
	})
	var msgs []*Message
	for range n {
		m := msg("same")
		m.Burst = 7
		msgs = append(msgs, m)
	}
	invs, _ := runHost(t, h, singleFunction(), Options{MaxConcurrentCalls: 4}, msgs...)
	for _, inv := range invs {
		if !inv.OK() || inv.Deliveries[0].DeliveryCount != 1 {
			t.Errorf("burst invocation failed (%s): the %d copies were not in flight together", inv.Failure, n)
		}
	}
}

func TestRequestLooksLikeTheHost(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checks := map[string]bool{
			"POST /ProcessOrder":   r.Method == http.MethodPost && r.URL.Path == "/ProcessOrder" && r.URL.RawQuery == "",
			"content type":         r.Header.Get("Content-Type") == "application/json; charset=utf-8",
			"invocation id":        len(r.Header.Get("X-Azure-Functions-InvocationId")) == 36,
			"host version":         r.Header.Get("X-Azure-Functions-HostVersion") == HostVersion,
			"user agent":           r.Header.Get("User-Agent") == "Azure-Functions-Host/"+HostVersion,
			"chunked, no length":   r.ContentLength == -1 && slices.Contains(r.TransferEncoding, "chunked"),
			"dialled on 127.0.0.1": strings.HasPrefix(r.Host, "127.0.0.1:"),
		}
		for name, ok := range checks {
			if !ok {
				t.Errorf("request: %s is not what the host sends (%s %s %v)", name, r.Method, r.URL, r.Header)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Outputs":{"parking":{"reason":"X"},"other":1},"Logs":[]}`))
	})
	invs, _ := runHost(t, h, singleFunction(), Options{}, msg("one"))
	if len(invs) != 1 || !invs[0].OK() {
		t.Fatalf("invocations %+v", invs)
	}
	if got := invs[0].IgnoredOutputs; !slices.Equal(got, []string{"other"}) {
		t.Errorf("ignored outputs %v, want [other]", got)
	}
	if o := invs[0].Outputs; len(o) != 1 || o[0].Text != "{\n  \"reason\": \"X\"\n}" || o[0].Entity != "orders-deadletter" {
		t.Errorf("outputs %+v", o)
	}
}

func TestDuplicateDetectionDropsResendsInsideTheWindow(t *testing.T) {
	q := NewQueue("orders", 0)
	q.DuplicateDetection = 10 * time.Minute
	clock := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	q.now = func() time.Time { return clock }
	first, resend, other := msg("A"), msg("A"), msg("B")
	q.Send(first, resend, other)
	clock = clock.Add(11 * time.Minute)
	late := msg("A")
	q.Send(late)
	if c := q.Counts(); c.Sent != 3 || c.Dropped != 1 || !slices.Equal(q.Dropped(), []*Message{resend}) {
		t.Errorf("counts %+v dropped %v; want the resend inside the window dropped, the late one kept", c, q.Dropped())
	}
}

// An output binding to the queue the trigger reads sends a new message into
// it, which the function then receives like any other.
func TestOutputToTheTriggerQueueIsDelivered(t *testing.T) {
	fn := batchFunction()
	fn.Bindings = append(fn.Bindings, Binding{Name: "requeue", Type: "serviceBus", Direction: "out", QueueName: "orders"})
	var calls callCounter
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.next() == 1 {
			_, _ = w.Write([]byte(`{"Outputs":{"requeue":["{\"given\":\"back\"}"]},"Logs":[]}`))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	})
	invs, q := runHost(t, h, fn, Options{}, msg("a"))
	if len(invs) != 2 {
		t.Fatalf("%d invocations, want the original and the message it sent", len(invs))
	}
	d := invs[1].Deliveries[0]
	// The host re-serialises a JSON string output indented.
	if !strings.Contains(string(d.Message.Body), `"given": "back"`) || d.DeliveryCount != 1 || d.Message.MessageID == "a" || d.Message.MessageID == "" {
		t.Errorf("second delivery: body %s, count %d, MessageId %q; want the output as a new message", d.Message.Body, d.DeliveryCount, d.Message.MessageID)
	}
	if c := q.Counts(); c.Sent != 2 || c.Completed != 2 {
		t.Errorf("queue counts %+v", c)
	}
}
