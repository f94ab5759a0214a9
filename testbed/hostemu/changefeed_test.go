package hostemu

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
)

// The Cosmos endpoint of the change feed tests, started on first use.
var cosmosDB = cosmostest.NewShared("hostemu")

// feedDoc is a test document: seq orders the writes within a partition.
type feedDoc struct {
	ID      string `json:"id"`
	OrderID string `json:"orderId"`
	Seq     int    `json:"seq"`
}

// feedCall is one invocation the fake handler saw.
type feedCall struct {
	n    int
	docs []feedDoc
}

// feedRig is the PublishOrderEvents trigger of the repository's app over a
// monitored and a lease container of its own, invoking a fake handler
// whose answer the test scripts.
type feedRig struct {
	t         *testing.T
	monitored *azcosmos.ContainerClient
	leases    *azcosmos.ContainerClient
	host      *Host
	fn        *Function
	queueFn   *Function

	mu    sync.Mutex
	calls []feedCall    // as the fake handler saw them
	invs  []*Invocation // as the host finished them
}

func newFeedRig(t *testing.T) *feedRig {
	t.Helper()
	env := cosmosDB.Env(t)
	client, err := cosmos.NewClient(env.Options())
	if err != nil {
		t.Fatal(err)
	}
	db, err := client.NewDatabase(env.Database)
	if err != nil {
		t.Fatal(err)
	}
	container := func(id, pk string) *azcosmos.ContainerClient {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		props := azcosmos.ContainerProperties{ID: id, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{pk}}}
		if _, err := db.CreateContainer(ctx, props, nil); err != nil {
			t.Fatalf("create container %s: %v", id, err)
		}
		c, err := db.NewContainer(id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _ = c.Delete(ctx, nil)
		})
		return c
	}
	suffix := strings.ToLower(rand.Text()[:8])
	r := &feedRig{t: t, monitored: container("feed-"+suffix, "/orderId"), leases: container("leases-"+suffix, "/id")}
	app := repoApp(t)
	if r.fn = app.Function("PublishOrderEvents"); r.fn == nil {
		t.Fatal("the app has no PublishOrderEvents")
	}
	r.queueFn = app.Function("ProcessOrder")
	return r
}

// invoking sets the handler the trigger invokes (the host needs a queue
// function too; it gets no messages).
func (r *feedRig) invoking(handler Endpointer) {
	r.t.Helper()
	var err error
	if r.host, err = New(Options{Functions: []*Function{r.queueFn}, Queue: NewQueue("orders", 0), Handler: handler}); err != nil {
		r.t.Fatal(err)
	}
}

// repoApp is the repository's function app.
func repoApp(t *testing.T) *App {
	t.Helper()
	root, err := cosmostest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	app, err := LoadApp(root)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// failFirst answers 500 to the first n invocations, then 200.
func failFirst(n int) func(int) int {
	return func(call int) int {
		if call <= n {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
}

// scripted is a fake handler that records each invocation's documents and
// answers with status(n): 200 with no outputs, or the status given.
func (r *feedRig) scripted(status func(n int) int) Endpointer {
	return httptestServer(r.t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var docs []feedDoc
		if err := documents(req.Body, &docs); err != nil {
			r.t.Errorf("the invocation is not the host's envelope: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		n := len(r.calls) + 1
		r.calls = append(r.calls, feedCall{n: n, docs: docs})
		r.mu.Unlock()
		if s := status(n); s != http.StatusOK {
			w.WriteHeader(s)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Outputs":{},"Logs":[],"ReturnValue":null}`))
	}))
}

// documents reads Data.documents of a change feed invocation into docs as
// the handler does (a JSON string holding a JSON string holding the
// array), and checks that Metadata holds sys alone.
func documents(envelope io.Reader, docs any) error {
	var env struct {
		Data     map[string]json.RawMessage
		Metadata map[string]json.RawMessage
	}
	if err := json.NewDecoder(envelope).Decode(&env); err != nil {
		return err
	}
	if _, ok := env.Metadata["sys"]; !ok || len(env.Metadata) != 1 {
		return fmt.Errorf("Metadata %v, want sys alone", env.Metadata)
	}
	var outer, inner string
	if err := json.Unmarshal(env.Data["documents"], &outer); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(outer), &inner); err != nil {
		return err
	}
	return json.Unmarshal([]byte(inner), docs)
}

// feedRun is one instance of the trigger, running until the test ends.
type feedRun struct {
	*ChangeFeed
	t      *testing.T
	cancel context.CancelFunc
	done   chan struct{} // closed once Run has returned
}

// start runs an instance of the trigger with cfg (containers filled in)
// until the test ends.
func (r *feedRig) start(cfg ChangeFeedConfig) *feedRun {
	r.t.Helper()
	cfg.Monitored, cfg.Leases, cfg.LeasePrefix = &CosmosContainer{r.monitored}, &CosmosContainer{r.leases}, "test.."
	cfg.PollDelay = cmp.Or(cfg.PollDelay, 50*time.Millisecond)
	cfg.Log = func(s string) { r.t.Log(s) }
	observe := cfg.Observe
	cfg.Observe = func(inv *Invocation) {
		r.mu.Lock()
		r.invs = append(r.invs, inv)
		r.mu.Unlock()
		if observe != nil {
			observe(inv)
		}
	}
	cf, err := r.host.ChangeFeed(r.fn, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := &feedRun{ChangeFeed: cf, t: r.t, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(run.done)
		if err := cf.Run(ctx); err != nil {
			r.t.Errorf("run: %v", err)
		}
	}()
	r.t.Cleanup(run.stop)
	return run
}

// stop ends the instance and waits until Run has returned.
func (f *feedRun) stop() {
	f.cancel()
	f.wait()
}

// crash ends the instance as one that died: its leases are not given back.
func (f *feedRun) crash() {
	f.Crash()
	f.stop()
}

// wait waits, at most 30 s, until Run has returned.
func (f *feedRun) wait() {
	f.t.Helper()
	select {
	case <-f.done:
	case <-time.After(30 * time.Second):
		f.t.Fatal("Run did not end within 30 s")
	}
}

func (r *feedRig) write(docs ...feedDoc) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, d := range docs {
		b, _ := json.Marshal(d)
		if _, err := r.monitored.UpsertItem(ctx, azcosmos.NewPartitionKeyString(d.OrderID), b, nil); err != nil {
			r.t.Fatalf("write %s: %v", d.ID, err)
		}
	}
}

// drain waits until the instances runs have delivered every change made
// so far.
func (r *feedRig) drain(runs ...*feedRun) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	feeds := make([]*ChangeFeed, len(runs))
	for i, run := range runs {
		feeds[i] = run.ChangeFeed
	}
	if err := Drain(ctx, time.Now(), feeds...); err != nil {
		r.t.Fatalf("%d instances: %v", len(feeds), err)
	}
}

// leaseDoc is the lease document of range 0.
func (r *feedRig) leaseDoc() *Lease {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := (&leaseStore{c: r.leases, prefix: "test.."}).read(ctx, "test..0")
	if err != nil {
		r.t.Fatal(err)
	}
	return l
}

// leaseCovers fails the test unless the lease is past every one of the
// want documents of the monitored container: written in an earlier second
// than its position, or seen in that second (Seen holds only that second's
// etags, so two documents written across a second boundary leave one).
func (r *feedRig) leaseCovers(cf *ChangeFeed, want int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pos, n := r.lease(), 0
	err := cf.query(ctx, headsQuery, []azcosmos.QueryParameter{{Name: "@ts", Value: 0}}, func(_ []byte, c change) {
		n++
		if c.ts > pos.TS || c.ts == pos.TS && !slices.Contains(pos.Seen, c.etag) {
			r.t.Errorf("lease at %+v, not past the document of _ts %d, _etag %s", pos, c.ts, c.etag)
		}
	})
	if err != nil {
		r.t.Fatal(err)
	}
	if n != want {
		r.t.Errorf("%d documents in the monitored container, want %d", n, want)
	}
}

// lease is the checkpoint of range 0.
func (r *feedRig) lease() FeedPosition {
	r.t.Helper()
	pos, err := r.leaseDoc().Position()
	if err != nil {
		r.t.Fatal(err)
	}
	return pos
}

func (r *feedRig) recorded() []feedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func (r *feedRig) invocations() []*Invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.invs)
}

func wave(partitions []string, from, to int) []feedDoc {
	var docs []feedDoc
	for seq := from; seq <= to; seq++ {
		for _, p := range partitions {
			docs = append(docs, feedDoc{ID: fmt.Sprintf("%s-%d", p, seq), OrderID: p, Seq: seq})
		}
	}
	return docs
}

// Every document comes once, each partition's in the order it was written,
// in batches of at most maxItemsPerInvocation, across checkpoints that fall
// inside a second; a document written again comes again, after the others.
func TestChangeFeedDeliversEachPartitionInOrder(t *testing.T) {
	r := newFeedRig(t)
	r.invoking(r.scripted(failFirst(0)))
	partitions := []string{"P1", "P2", "P3"}
	r.write(wave(partitions, 1, 6)...)
	cf := r.start(ChangeFeedConfig{MaxItems: 4})
	r.drain(cf)
	r.write(wave(partitions, 7, 9)...)
	// P2-1 changed in a later second: the latest version comes again,
	// after the rest. (Within one second the emulation orders a replace by
	// its document's creation, docs/local-host.md.)
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	r.write(feedDoc{ID: "P2-1", OrderID: "P2", Seq: 10})
	r.drain(cf)

	last := map[string]int{}
	count := 0
	for _, c := range r.recorded() {
		if len(c.docs) > 4 {
			t.Errorf("invocation %d carried %d documents, maxItemsPerInvocation is 4", c.n, len(c.docs))
		}
		for _, d := range c.docs {
			count++
			if d.Seq <= last[d.OrderID] {
				t.Errorf("partition %s: %s (seq %d) came after seq %d", d.OrderID, d.ID, d.Seq, last[d.OrderID])
			}
			last[d.OrderID] = d.Seq
		}
	}
	if count != 3*9+1 {
		t.Errorf("%d documents delivered, want %d (each once, and P2-1 again)", count, 3*9+1)
	}
	if s := cf.Stats(); s.Failed != 0 || s.Batches != len(r.recorded()) || s.Documents != count {
		t.Errorf("stats %+v", s)
	}
	if pos := r.lease(); pos.TS == 0 || len(pos.Seen) == 0 {
		t.Errorf("lease position %+v, want the second of the last change and its etags", pos)
	}
}

// A failed invocation leaves the lease where it was; the same batch is
// executed again after the policy's delay, and the checkpoint moves once it
// succeeds.
func TestChangeFeedCheckpointAdvancesOnlyOnSuccess(t *testing.T) {
	r := newFeedRig(t)
	r.invoking(r.scripted(failFirst(2)))
	r.write(wave([]string{"P1", "P2"}, 1, 2)...)
	var mu sync.Mutex
	var during []FeedPosition
	cf := r.start(ChangeFeedConfig{
		Retry: &RetryPolicy{Strategy: "fixedDelay", MaxRetryCount: -1, DelayInterval: 100 * time.Millisecond},
		Observe: func(inv *Invocation) {
			if !inv.OK() {
				pos := r.lease()
				mu.Lock()
				during = append(during, pos)
				mu.Unlock()
			}
		}})
	r.drain(cf)

	calls := r.recorded()
	if len(calls) != 3 {
		t.Fatalf("%d invocations, want 3 (two failures, then the success)", len(calls))
	}
	for _, c := range calls[1:] {
		if !slices.Equal(c.docs, calls[0].docs) {
			t.Errorf("invocation %d carried %v, want the failed batch %v again", c.n, c.docs, calls[0].docs)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, pos := range during {
		if pos.TS != 0 || len(pos.Seen) != 0 {
			t.Errorf("after failure %d the lease is at %+v, want the beginning", i+1, pos)
		}
	}
	r.leaseCovers(cf.ChangeFeed, 4) // the success checkpointed the batch
	if s := cf.Stats(); s.Failed != 2 || s.Retries != 2 || s.Batches != 1 || s.Skipped != 0 {
		t.Errorf("stats %+v, want 2 failed, 2 retries, 1 batch", s)
	}
	// The two failed invocations are uncheckpointed (their batch came again),
	// the success is not.
	invs := r.invocations()
	if len(invs) != 3 {
		t.Fatalf("%d invocations observed, want 3", len(invs))
	}
	want := []Uncheckpointed{{invs[0].ID, "failed"}, {invs[1].ID, "failed"}}
	if got := cf.Stats().Uncheckpointed; !slices.Equal(got, want) {
		t.Errorf("uncheckpointed %v, want %v", got, want)
	}
}

// With maxRetryCount n the batch is executed n times in all, then the
// checkpoint moves past it, and the partition's later documents come.
func TestChangeFeedSpentRetriesCheckpointPastTheBatch(t *testing.T) {
	r := newFeedRig(t)
	r.invoking(r.scripted(failFirst(3)))
	r.write(feedDoc{ID: "P1-1", OrderID: "P1", Seq: 1})
	cf := r.start(ChangeFeedConfig{Retry: &RetryPolicy{Strategy: "fixedDelay", MaxRetryCount: 3, DelayInterval: 20 * time.Millisecond}})
	r.drain(cf)
	r.write(feedDoc{ID: "P1-2", OrderID: "P1", Seq: 2})
	r.drain(cf)

	var got []string
	for _, c := range r.recorded() {
		for _, d := range c.docs {
			got = append(got, d.ID)
		}
	}
	if want := []string{"P1-1", "P1-1", "P1-1", "P1-2"}; !slices.Equal(got, want) {
		t.Errorf("executions %v, want %v", got, want)
	}
	if s := cf.Stats(); s.Skipped != 1 || s.SkippedDocuments != 1 || s.Batches != 1 {
		t.Errorf("stats %+v, want one batch skipped and one delivered", s)
	}
	// The last execution is checkpointed past: its batch does not come
	// again, so it is not booked as uncheckpointed.
	if u := cf.Stats().Uncheckpointed; len(u) != 2 {
		t.Errorf("uncheckpointed %v, want the 2 executions that were retried", u)
	}
}

// A handler killed while an invocation is in flight fails it; the batch is
// executed again on the restarted handler, from the unchanged checkpoint.
func TestChangeFeedKillMidBatch(t *testing.T) {
	w := startFake(t, "ok", WorkerConfig{})
	r := newFeedRig(t)
	r.invoking(w)
	r.write(wave([]string{"P1", "P2"}, 1, 3)...)
	cf := r.start(ChangeFeedConfig{
		Retry:      &RetryPolicy{Strategy: "fixedDelay", MaxRetryCount: -1, DelayInterval: 50 * time.Millisecond},
		KillDuring: func(n int) bool { return n == 1 },
		Kill:       w.Kill})
	r.drain(cf)

	invs := r.invocations()
	if len(invs) != 2 {
		t.Fatalf("%d invocations, want the killed one and its retry", len(invs))
	}
	if invs[0].OK() || !strings.Contains(invs[0].Failure, "no answer") {
		t.Errorf("the killed invocation: %q, want no answer from the handler", invs[0].Failure)
	}
	if !invs[1].OK() || strings.Join(invs[1].Logs, ",") != "P1-1,P2-1,P1-2,P2-2,P1-3,P2-3" {
		t.Errorf("the retry: ok %v, documents %v, want all six in order", invs[1].OK(), invs[1].Logs)
	}
	if s, ws := cf.Stats(), w.Stats(); s.Kills != 1 || ws.Kills != 1 || ws.Starts != 2 {
		t.Errorf("stats %+v, worker %+v: want one kill and a restart", s, ws)
	}
	if pos := r.lease(); len(pos.Seen) == 0 {
		t.Errorf("lease %+v, want it past the batch", pos)
	}
}

// echoDocuments is the fake handler's PublishOrderEvents: it answers 200
// with the ids of the documents it got as Logs.
func echoDocuments(w http.ResponseWriter, r *http.Request) {
	var docs []feedDoc
	if err := documents(r.Body, &docs); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	logs := make([]string, len(docs))
	for i, d := range docs {
		logs[i] = d.ID
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"Outputs": map[string]any{}, "Logs": logs, "ReturnValue": nil})
}

// An invocation past functionTimeout fails like any other: the host
// restarts the handler, and the batch runs again from the checkpoint.
func TestChangeFeedFunctionTimeoutFailsTheBatch(t *testing.T) {
	r := newFeedRig(t)
	release := make(chan struct{})
	r.invoking(r.scripted(func(n int) int {
		if n == 1 {
			<-release // hangs until the test ends: only the timeout answers
		}
		return http.StatusOK
	}))
	// After scripted's: cleanups run last first, and the server's Close
	// waits for the hanging call.
	t.Cleanup(func() { close(release) })
	restarts := 0
	r.host.opts.FunctionTimeout = 300 * time.Millisecond
	r.host.opts.Restart = func(string) error { restarts++; return nil }
	r.write(wave([]string{"P1"}, 1, 2)...)
	cf := r.start(ChangeFeedConfig{Retry: &RetryPolicy{Strategy: "fixedDelay", MaxRetryCount: -1, DelayInterval: 10 * time.Millisecond}})
	r.drain(cf)

	invs := r.invocations()
	if len(invs) != 2 || !invs[0].TimedOut || !invs[1].OK() {
		t.Fatalf("invocations %d (first timed out: %v), want a timed-out one and its successful retry", len(invs), len(invs) > 0 && invs[0].TimedOut)
	}
	if restarts != 1 {
		t.Errorf("%d restarts, want the host's restart after the timeout", restarts)
	}
	if calls := r.recorded(); len(calls) != 2 || !slices.Equal(calls[0].docs, calls[1].docs) {
		t.Errorf("calls %v, want the same batch twice", calls)
	}
}

// Retire (an instance scaled in: Azure's DrainMode) lets the batch in
// flight finish and checkpoints it, starts no other, gives the lease back
// and ends Run: the batch does not come again elsewhere.
func TestChangeFeedRetireFinishesTheBatchInFlight(t *testing.T) {
	r := newFeedRig(t)
	inFlight, release := make(chan struct{}), make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	r.invoking(r.scripted(func(n int) int {
		if n == 1 {
			close(inFlight)
			<-release
		}
		return http.StatusOK
	}))
	t.Cleanup(free) // before the fake handler closes, whatever failed
	r.write(wave([]string{"P1"}, 1, 2)...)
	cf := r.start(ChangeFeedConfig{})
	select {
	case <-inFlight:
	case <-time.After(30 * time.Second):
		t.Fatal("no invocation within 30 s")
	}
	cf.Retire()
	free()
	cf.wait() // Retire alone ends Run
	if calls := r.recorded(); len(calls) != 1 || len(calls[0].docs) != 2 {
		t.Errorf("invocations %v, want the one in flight with both documents", calls)
	}
	r.leaseCovers(cf.ChangeFeed, 2) // the batch in flight checkpointed
	if s := cf.Stats(); s.Batches != 1 || len(s.Uncheckpointed) != 0 {
		t.Errorf("stats %+v, want the batch done and checkpointed", s)
	}
	if l := r.leaseDoc(); l.Owner != "" {
		t.Errorf("lease owned by %q after Retire, want it given back", l.Owner)
	}
}
