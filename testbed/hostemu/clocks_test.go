package hostemu

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordersink/orders-consumer/internal/pipetest"
)

// The platform's clocks, scaled down: a lock of 300 ms instead of a minute,
// a renewal of 1 s and a function timeout of 2 s instead of five minutes.
// The rules are the same; only the durations shrink. The tests of the
// host's clocks run on virtual time (testing/synctest), the handler served
// on a network in memory: their bounds are exact on any machine.
const (
	testLock    = 300 * time.Millisecond
	testRenewal = time.Second
	testTimeout = 2 * time.Second
)

func lockedQueue(msgs ...*Message) *Queue {
	q := NewQueue("orders", 0)
	q.LockDuration = testLock
	q.Send(msgs...)
	return q
}

// byDelivery finds the invocation of one delivery of a message.
func byDelivery(t *testing.T, invs []*Invocation, id string, count int) *Invocation {
	t.Helper()
	for _, inv := range invs {
		for _, d := range inv.Deliveries {
			if d.Message.MessageID == id && d.DeliveryCount == count {
				return inv
			}
		}
	}
	t.Fatalf("no delivery %d of %s", count, id)
	return nil
}

func TestBatchLockIsNeverRenewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := sleepy(3*testLock, "a")
		srv, tr := bubbleServer(t, http.HandlerFunc(fakeFunction))
		q := lockedQueue(msg(a), msg("b"))
		invs := runQueue(t, srv, batchFunction(), Options{MaxMessageBatchSize: 10, MaxAutoLockRenewalDuration: time.Minute, Transport: tr}, q)
		if len(invs) == 0 {
			t.Fatal("no invocation")
		}
		first := invs[0]
		if !first.OK() || len(first.Deliveries) != 2 {
			t.Fatalf("first batch: ok=%v, %d messages (%s)", first.OK(), len(first.Deliveries), first.Failure)
		}
		for i, s := range first.Settlements {
			if s != LockLost {
				t.Errorf("first batch, message %s: %s, want %s: a batch that outlives the lock cannot complete",
					first.Deliveries[i].Message.MessageID, s, LockLost)
			}
		}
		again := byDelivery(t, invs, a, 2)
		if again.Settlements[0] != Completed {
			t.Errorf("delivery 2: %s, want completed", again.Settlements[0])
		}
		if c := q.Counts(); c.ExpiredLocks != 2 || c.Completed != 2 || c.DeadLettered != 0 {
			t.Errorf("queue counts %+v, want 2 expired locks and both completed once", c)
		}
	})
}

func TestSingleLockIsRenewedUpToMaxAutoLockRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, tr := bubbleServer(t, http.HandlerFunc(fakeFunction))
		renewed := sleepy(3*testLock, "renewed")             // past the lock, within the renewal
		expired := sleepy(testRenewal+3*testLock, "expired") // past the renewal and the last lock
		q := lockedQueue(msg(renewed), msg(expired))
		invs := runQueue(t, srv, singleFunction(), Options{MaxConcurrentCalls: 4, MaxAutoLockRenewalDuration: testRenewal, Transport: tr}, q)

		if inv := byDelivery(t, invs, renewed, 1); inv.Settlements[0] != Completed {
			t.Errorf("renewed: %s, want completed at delivery 1: the host renews a single message's lock", inv.Settlements[0])
		}
		slow := byDelivery(t, invs, expired, 1)
		again := byDelivery(t, invs, expired, 2)
		if slow.Settlements[0] != LockLost || again.Settlements[0] != Completed {
			t.Errorf("expired: delivery 1 %s, delivery 2 %s; want %s then completed", slow.Settlements[0], again.Settlements[0], LockLost)
		}
		// The expiry gives the message back while its first invocation still
		// runs: the redelivery starts before that invocation ends.
		if end := slow.Started.Add(slow.Took); !again.Started.Before(end) {
			t.Errorf("delivery 2 started %s after delivery 1 ended; want it in flight beside the lost one",
				again.Started.Sub(end))
		}
		// Renewals stop at testRenewal; the last lock runs out at most one lock
		// later.
		if held := again.Started.Sub(slow.Started); held < testRenewal || held > testRenewal+testLock {
			t.Errorf("the lock was lost after %s; want between the renewal (%s) and one lock more", held, testRenewal)
		}
		if c := q.Counts(); c.ExpiredLocks != 1 || c.Completed != 2 {
			t.Errorf("queue counts %+v, want 1 expired lock, 2 completed", c)
		}
	})
}

func TestLockExpiryAtTheLastDeliveryDeadLetters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, tr := bubbleServer(t, http.HandlerFunc(fakeFunction))
		q := NewQueue("orders", 1)
		q.LockDuration = testLock
		q.Send(msg(sleepy(3*testLock, "late")))
		invs := runQueue(t, srv, batchFunction(), Options{Transport: tr}, q)
		if len(invs) != 1 || invs[0].Settlements[0] != DeadLettered {
			var settlements [][]Settlement
			for _, inv := range invs {
				settlements = append(settlements, inv.Settlements)
			}
			t.Fatalf("invocations %d, settlements %v; want one, the expiry of the last delivery dead-lettering it", len(invs), settlements)
		}
		if dl := q.DeadLetters(); len(dl) != 1 || !strings.Contains(dl[0].Description, "lock expired") {
			t.Errorf("dead letters %+v", dl)
		}
	})
}

// TestFunctionTimeoutRestartsTheHandlerAndFailsEveryInvocation: an
// invocation past functionTimeout fails as timed out, exactly at the
// timeout, and the host replaces the handler, which fails every other
// invocation in flight on it (slow, sent later, well inside its own
// timeout), once; both are delivered again and completed. On virtual time,
// the handler in process on a network in memory, replaced as the host
// replaces its process: the connections of the old one end.
func TestFunctionTimeoutRestartsTheHandlerAndFailsEveryInvocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hangID, slowID := sleepy(time.Hour, "hang"), sleepy(5*time.Second, "slow")
		h := &replaceable{h: http.HandlerFunc(fakeFunction)}
		h.start(t)
		const timeout = testTimeout
		q := NewQueue("orders", 0)
		q.Send(msg(hangID))
		time.AfterFunc(timeout*2/5, func() { q.Send(msg(slowID)) })
		invs := runQueue(t, h, singleFunction(),
			Options{MaxConcurrentCalls: 2, FunctionTimeout: timeout, Restart: h.Restart, Transport: h.net.Transport()}, q)

		hang := byDelivery(t, invs, hangID, 1)
		if !hang.TimedOut || hang.Took != timeout || !strings.Contains(hang.Failure, "Timeout value of 00:00:02 exceeded by function 'Functions.ProcessOrder'") {
			t.Errorf("hang: timedOut=%v after %s, failure %q; want timed out at %s", hang.TimedOut, hang.Took, hang.Failure, timeout)
		}
		slow := byDelivery(t, invs, slowID, 1)
		if slow.OK() || slow.TimedOut || !strings.HasPrefix(slow.Failure, "no answer") {
			t.Errorf("slow: ok=%v timedOut=%v failure %q; want it failed by the restart, not by its own timeout", slow.OK(), slow.TimedOut, slow.Failure)
		}
		for _, id := range []string{hangID, slowID} {
			if inv := byDelivery(t, invs, id, 2); inv.Settlements[0] != Completed {
				t.Errorf("%s delivery 2: %s (%s)", id, inv.Settlements[0], inv.Failure)
			}
		}
		if len(h.restarts) != 1 {
			t.Errorf("%d restarts (%q), want one after the timeout", len(h.restarts), h.restarts)
		}
	})
}

// replaceable serves h on a network in memory, at one address, and
// Restart replaces it as the host replaces a handler process: every
// connection of the old one ends, so every invocation in flight fails.
type replaceable struct {
	h        http.Handler
	net      *pipetest.Network
	mu       sync.Mutex
	srv      *http.Server
	restarts []string
}

func (r *replaceable) start(t *testing.T) {
	r.net = &pipetest.Network{}
	t.Cleanup(r.net.Drain)
	r.serve()
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		_ = r.srv.Close()
	})
}

func (r *replaceable) serve() {
	ln, err := r.net.Listen("tcp", "127.0.0.1:7000")
	if err != nil {
		panic(err) // the old server closed its listener first
	}
	r.srv = &http.Server{Handler: r.h}
	go func() { _ = r.srv.Serve(ln) }()
}

// Endpoint is the server's URL once a restart in progress is done, as a
// Worker holds new invocations until the restarted handler answers.
func (r *replaceable) Endpoint(context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "http://127.0.0.1:7000", nil
}

// Restart replaces the server.
func (r *replaceable) Restart(reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.restarts = append(r.restarts, reason)
	_ = r.srv.Close()
	r.serve()
	return nil
}

// TestFunctionTimeoutRestartsTheHandlerProcess: with a Worker, the restart
// after functionTimeout replaces the handler's process (the test binary as
// a fake handler), and the message is completed by the new one.
func TestFunctionTimeoutRestartsTheHandlerProcess(t *testing.T) {
	w := startFake(t, "ok", WorkerConfig{})
	hang := sleepy(time.Hour, "hang")
	q := NewQueue("orders", 0)
	q.Send(msg(hang))
	invs := runQueue(t, w, singleFunction(), Options{FunctionTimeout: testTimeout, Restart: w.Restart}, q)
	if inv := byDelivery(t, invs, hang, 1); !inv.TimedOut {
		t.Errorf("hang: timedOut=%v, failure %q", inv.TimedOut, inv.Failure)
	}
	if inv := byDelivery(t, invs, hang, 2); inv.Settlements[0] != Completed {
		t.Errorf("hang delivery 2: %s (%s)", inv.Settlements[0], inv.Failure)
	}
	if s := w.Stats(); s.TimeoutRestarts != 1 || s.Starts != 2 || s.UnexpectedExits != 0 || s.StartErrors != 0 {
		t.Errorf("worker stats %+v, want one restart after the timeout and no error", s)
	}
}

func TestExitCodes(t *testing.T) {
	t.Run("0 is not restarted", func(t *testing.T) {
		w := startFake(t, "ok", WorkerConfig{})
		q := NewQueue("orders", 0)
		q.Send(msg("exit0-1"), msg("ok-1"))
		invs := runQueue(t, w, singleFunction(), Options{MaxConcurrentCalls: 1}, q)
		if s := w.Stats(); s.Starts != 1 || s.UnexpectedExits != 1 {
			t.Errorf("worker stats %+v, want one start and no restart", s)
		}
		if c := q.Counts(); c.DeadLettered != 2 {
			t.Errorf("queue %+v, want both messages dead-lettered: every later invocation fails", c)
		}
		last := invs[len(invs)-1]
		if !strings.Contains(last.Failure, "exited with code 0") {
			t.Errorf("last failure %q, want the handler named as exited with code 0", last.Failure)
		}
	})
	t.Run("200 is restarted without an error", func(t *testing.T) {
		w := startFake(t, "ok", WorkerConfig{})
		q := NewQueue("orders", 0)
		q.Send(msg("exit200-1"))
		invs := runQueue(t, w, singleFunction(), Options{}, q)
		if s := w.Stats(); s.Starts != 2 || s.UnexpectedExits != 0 || s.StartErrors != 0 {
			t.Errorf("worker stats %+v, want a quiet restart", s)
		}
		// A delivery sent before the host noticed the exit fails too.
		if c := q.Counts(); c.Completed != 1 || len(invs) > 3 {
			t.Errorf("queue %+v after %d invocations, want the message completed once the handler is back", c, len(invs))
		}
	})
}

// bubbleServer serves h on a network in memory for a test in a synctest
// bubble, and returns it with the transport the host must reach it by.
func bubbleServer(t *testing.T, h http.Handler) (Endpointer, http.RoundTripper) {
	t.Helper()
	n := &pipetest.Network{}
	t.Cleanup(n.Drain)
	return FixedEndpoint(n.Serve(t, "127.0.0.1:7000", h)), n.Transport()
}

func httptestServer(t *testing.T, h http.Handler) Endpointer {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return FixedEndpoint(srv.URL)
}

func TestClocksResolveAndApply(t *testing.T) {
	host := HostConfig{FunctionTimeout: 5 * time.Minute, MaxAutoLockRenewalDuration: 5 * time.Minute}
	c := Clocks{FunctionTimeout: 5 * time.Second}.Resolve(host)
	if c != (Clocks{LockDuration: DefaultLockDuration, MaxAutoLockRenewal: 5 * time.Minute, FunctionTimeout: 5 * time.Second}) {
		t.Errorf("resolved %+v", c)
	}
	s := NewSettings([]string{"QUEUE_LOCK_DURATION=3s"})
	Clocks{LockDuration: 2 * time.Second, FunctionTimeout: 5 * time.Second}.Apply(s)
	for name, want := range map[string]string{"QUEUE_LOCK_DURATION": "3s", "HOST_FUNCTION_TIMEOUT": "5s", "HOST_MAX_AUTO_LOCK_RENEWAL": ""} {
		if got, _ := s.Get(name); got != want {
			t.Errorf("%s = %q, want %q (a given setting wins; clocks not overridden are left to host.json)", name, got, want)
		}
	}
}
