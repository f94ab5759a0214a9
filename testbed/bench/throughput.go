package bench

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// Variant is one way of writing orders, measured by RunPhase.
type Variant struct {
	Name string
	// PerOp is the messages one operation carries (a batch invocation
	// carries many); Concurrency the operations in flight.
	PerOp       int
	Concurrency int

	// EmulatorPID, when set, is the Cosmos emulator's process, whose CPU
	// time each phase records.
	EmulatorPID int

	counter  *Counter
	outcomes *OutcomeLog // nil for the plain loops, which have no outcomes
	prepare  preparer
	close    func()
}

// preparer builds the inputs of ops operations (ids start with prefix)
// outside the timed part and returns the operation.
type preparer func(prefix string, ops int) (func(ctx context.Context, i int) error, error)

// Close releases the variant's server, if any.
func (v *Variant) Close() {
	if v.close != nil {
		v.close()
	}
}

// Phase is one timed run of a variant.
type Phase struct {
	Variant   string
	Messages  int
	Elapsed   time.Duration
	Latencies []time.Duration // per operation, sorted
	Errors    int
	FirstErr  error
	Requests  Counts
	Outcomes  Outcomes
	// CPU time used during the phase by this process (load generator,
	// handler and SDK together) and by the emulator (0 when not watched).
	SelfCPU, EmulatorCPU time.Duration
}

// CPUPerMessage is CPU time per message.
func (p Phase) CPUPerMessage(d time.Duration) time.Duration {
	if p.Messages == 0 {
		return 0
	}
	return d / time.Duration(p.Messages)
}

// Rate is messages per second.
func (p Phase) Rate() float64 { return float64(p.Messages) / p.Elapsed.Seconds() }

// Percentile returns the latency at q (0..1) of one operation.
func (p Phase) Percentile(q float64) time.Duration {
	if len(p.Latencies) == 0 {
		return 0
	}
	i := int(q * float64(len(p.Latencies)-1))
	return p.Latencies[i]
}

// RunPhase writes messages orders (ids start with prefix) with the variant,
// after an untimed warm-up that fills the connection pools.
func (v *Variant) RunPhase(ctx context.Context, prefix string, messages int) (Phase, error) {
	warm := 2 * v.Concurrency
	op, err := v.prepare(prefix+"w", warm)
	if err != nil {
		return Phase{}, err
	}
	if _, _, errs, first := drive(ctx, warm, v.Concurrency, op); errs > 0 {
		return Phase{}, fmt.Errorf("%s warm-up: %d errors, first: %w", v.Name, errs, first)
	}
	ops := messages / v.PerOp
	if op, err = v.prepare(prefix, ops); err != nil {
		return Phase{}, err
	}
	v.counter.Snapshot()
	if v.outcomes != nil {
		v.outcomes.Take()
	}
	cpuUsed := cpuSince(os.Getpid(), v.EmulatorPID)
	elapsed, lat, errs, first := drive(ctx, ops, v.Concurrency, op)
	used := cpuUsed()
	p := Phase{Variant: v.Name, Messages: ops * v.PerOp, Elapsed: elapsed, Latencies: lat, Errors: errs, FirstErr: first,
		Requests: v.counter.Snapshot(), SelfCPU: used[0], EmulatorCPU: used[1]}
	if v.outcomes != nil {
		p.Outcomes = v.outcomes.Take()
	}
	return p, nil
}

// drive runs ops operations, conc at a time, and times them.
func drive(ctx context.Context, ops, conc int, op func(context.Context, int) error) (time.Duration, []time.Duration, int, error) {
	lat := make([]time.Duration, ops)
	var (
		next   atomic.Int64
		errs   atomic.Int64
		first  error
		once   sync.Once
		wg     sync.WaitGroup
		client = time.Now()
	)
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= ops {
					return
				}
				t0 := time.Now()
				if err := op(ctx, i); err != nil {
					errs.Add(1)
					once.Do(func() { first = err })
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(client)
	slices.Sort(lat)
	return elapsed, lat, int(errs.Load()), first
}

// orderID is the id of a phase's i-th order.
func orderID(prefix string, i int) string { return fmt.Sprintf("%s-%06d", prefix, i) }

// invocations builds ops invocations of perOp new orders each: to
// ProcessOrder when perOp is 1, else to ProcessOrderBatch.
func invocations(perOp int) func(prefix string, ops int) ([][]byte, error) {
	return func(prefix string, ops int) ([][]byte, error) {
		return each(ops, func(i int) ([]byte, error) {
			ds := make([]hostemu.Delivery, perOp)
			for j := range ds {
				ds[j] = newOrder(orderID(prefix, i*perOp+j))
			}
			if perOp == 1 {
				return SingleInvocation(ds[0])
			}
			return BatchInvocation(ds)
		})
	}
}

// sending is the preparer of a variant whose i-th operation sends the i-th
// request build makes.
func sending(build func(prefix string, ops int) ([][]byte, error), send func(context.Context, []byte) error) preparer {
	return func(prefix string, ops int) (func(context.Context, int) error, error) {
		reqs, err := build(prefix, ops)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, i int) error { return send(ctx, reqs[i]) }, nil
	}
}

// each returns f(0) … f(n-1), or the first error.
func each(n int, f func(i int) ([]byte, error)) ([][]byte, error) {
	out := make([][]byte, n)
	for i := range out {
		var err error
		if out[i], err = f(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// acceptance returns the documents the handler writes for a new order: the
// order document and its outbox event, byte for byte as the handler builds
// them.
func acceptance(id string) ([]orders.NewDocument, error) {
	o, err := orders.ParseOrder(OrderBody(id, "CUST-1"))
	if err != nil {
		return nil, err
	}
	b, err := o.AcceptanceDocuments(orders.Acceptance{MessageID: id, AcceptedAt: time.Now()})
	if err != nil {
		return nil, err
	}
	return b.Documents, nil
}

// noContent is what package cosmos sends on every write.
var noContent = &azcosmos.ItemOptions{EnableContentResponseOnWrite: false}

// plainVariant writes each new order's acceptance documents with write, a
// loop over a container client built by cosmos.NewClient, the same
// constructor the handler's store uses, over a counted transport.
func plainVariant(t Target, name string, conc int, write func(context.Context, *azcosmos.ContainerClient, string, []orders.NewDocument) error) (*Variant, error) {
	counter := NewCounter(cosmos.NewTransport(PoolSize))
	client, err := cosmos.NewClient(t.Options(counter))
	if err != nil {
		return nil, err
	}
	cc, err := client.NewContainer(t.Database, t.Container)
	if err != nil {
		return nil, err
	}
	return &Variant{Name: name, PerOp: 1, Concurrency: conc, counter: counter,
		prepare: func(prefix string, ops int) (func(context.Context, int) error, error) {
			ids := make([]string, ops)
			docs := make([][]orders.NewDocument, ops)
			for i := range ids {
				var err error
				ids[i] = orderID(prefix, i)
				if docs[i], err = acceptance(ids[i]); err != nil {
					return nil, err
				}
			}
			return func(ctx context.Context, i int) error { return write(ctx, cc, ids[i], docs[i]) }, nil
		}}, nil
}

// PlainCreate is the baseline: a loop of azcosmos CreateItem calls writing
// the same order document the handler writes (without its outbox event).
func PlainCreate(t Target, conc int) (*Variant, error) {
	name := fmt.Sprintf("plain azcosmos CreateItem loop (order document), %d at once", conc)
	return plainVariant(t, name, conc, func(ctx context.Context, cc *azcosmos.ContainerClient, id string, docs []orders.NewDocument) error {
		_, err := cc.CreateItem(ctx, azcosmos.NewPartitionKeyString(id), docs[0].Body, noContent)
		return err
	})
}

// PlainBatch writes the same two documents as the handler (order and outbox
// event) in one transactional batch per order, with no handler around it.
func PlainBatch(t Target, conc int) (*Variant, error) {
	name := fmt.Sprintf("plain azcosmos transactional batch loop (order + outbox event), %d at once", conc)
	return plainVariant(t, name, conc, func(ctx context.Context, cc *azcosmos.ContainerClient, id string, docs []orders.NewDocument) error {
		b := cc.NewTransactionalBatch(azcosmos.NewPartitionKeyString(id))
		for _, d := range docs {
			b.CreateItem(d.Body, nil)
		}
		resp, err := cc.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil {
			return err
		}
		for _, r := range resp.OperationResults {
			if r.StatusCode >= 400 {
				return fmt.Errorf("batch %s: operation status %d", id, r.StatusCode)
			}
		}
		return nil
	})
}

// HandlerDirect calls the handler's ServeHTTP in process with one-message
// invocations: the handler's work without the loopback HTTP hop.
func HandlerDirect(t Target, conc int) (*Variant, error) {
	rig, err := NewRig(t, 0)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("handler, one message per invocation, ServeHTTP called in process (no HTTP hop), %d at once", conc)
	return rig.variant(name, 1, conc, sending(invocations(1), func(_ context.Context, req []byte) error {
		return rig.Invoke(handler.FunctionProcessOrder, req)
	})), nil
}

// Handler sends invocations of perOp messages over loopback HTTP to the
// handler served in this process, as the Functions host does, conc at once:
// POST /ProcessOrder when perOp is 1, else POST /ProcessOrderBatch (the host's listener sends one at
// a time) to a handler that writes parallelism messages of a batch at once
// (0: the handler's default).
func Handler(t Target, perOp, conc, parallelism int) (*Variant, error) {
	rig, err := NewRig(t, parallelism)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("handler, one message per invocation (POST /ProcessOrder), %d at once", conc)
	function := handler.FunctionProcessOrder
	if perOp > 1 {
		name = fmt.Sprintf("handler, %d messages per invocation (POST /ProcessOrderBatch), %d invocation(s) at once, BATCH_PARALLELISM %d",
			perOp, conc, cmp.Or(parallelism, handler.DefaultBatchParallelism))
		function = handler.FunctionProcessOrderBatch
	}
	srv := httptest.NewServer(rig.Handler)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Minute}
	v := rig.variant(name, perOp, conc, sending(invocations(perOp), post(hc, srv.URL+"/"+function)))
	v.close = srv.Close
	return v, nil
}
