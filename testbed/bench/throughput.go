package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/orders"
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
	// prepare builds the inputs of ops operations outside the timed part
	// and returns the operation.
	prepare func(prefix string, ops int) (func(ctx context.Context, i int) error, error)
	close   func()
}

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
	cpu := watchCPU(os.Getpid(), v.EmulatorPID)
	elapsed, lat, errs, first := drive(ctx, ops, v.Concurrency, op)
	used := cpu.used()
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
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	wg.Wait()
	elapsed := time.Since(client)
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	return elapsed, lat, int(errs.Load()), first
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

// plainContainer is a container client built by cosmos.NewClient, the same
// constructor the handler's store uses, over a counted transport.
func plainContainer(t Target, conns int) (*azcosmos.ContainerClient, *Counter, error) {
	c := NewCounter(cosmos.NewTransport(conns))
	client, err := cosmos.NewClient(t.Options(c))
	if err != nil {
		return nil, nil, err
	}
	cc, err := client.NewContainer(t.Database, t.Container)
	return cc, c, err
}

// PlainCreate is the baseline: a loop of azcosmos CreateItem calls writing
// the same order document the handler writes (without its outbox event).
func PlainCreate(t Target, conc int) (*Variant, error) {
	cc, counter, err := plainContainer(t, PoolSize)
	if err != nil {
		return nil, err
	}
	return &Variant{Name: fmt.Sprintf("plain azcosmos CreateItem loop (order document), %d at once", conc), PerOp: 1, Concurrency: conc, counter: counter,
		prepare: func(prefix string, ops int) (func(context.Context, int) error, error) {
			docs := make([][]byte, ops)
			ids := make([]string, ops)
			for i := range docs {
				ids[i] = fmt.Sprintf("%s-%06d", prefix, i)
				d, err := acceptance(ids[i])
				if err != nil {
					return nil, err
				}
				docs[i] = d[0].Body
			}
			return func(ctx context.Context, i int) error {
				_, err := cc.CreateItem(ctx, azcosmos.NewPartitionKeyString(ids[i]), docs[i], noContent)
				return err
			}, nil
		}}, nil
}

// PlainBatch writes the same two documents as the handler (order and outbox
// event) in one transactional batch per order, with no handler around it.
func PlainBatch(t Target, conc int) (*Variant, error) {
	cc, counter, err := plainContainer(t, PoolSize)
	if err != nil {
		return nil, err
	}
	return &Variant{Name: fmt.Sprintf("plain azcosmos transactional batch loop (order + outbox event), %d at once", conc), PerOp: 1, Concurrency: conc, counter: counter,
		prepare: func(prefix string, ops int) (func(context.Context, int) error, error) {
			docs := make([][]orders.NewDocument, ops)
			ids := make([]string, ops)
			for i := range docs {
				ids[i] = fmt.Sprintf("%s-%06d", prefix, i)
				d, err := acceptance(ids[i])
				if err != nil {
					return nil, err
				}
				docs[i] = d
			}
			return func(ctx context.Context, i int) error {
				b := cc.NewTransactionalBatch(azcosmos.NewPartitionKeyString(ids[i]))
				for _, d := range docs[i] {
					b.CreateItem(d.Body, nil)
				}
				resp, err := cc.ExecuteTransactionalBatch(ctx, b, nil)
				if err != nil {
					return err
				}
				for _, r := range resp.OperationResults {
					if r.StatusCode >= 400 {
						return fmt.Errorf("batch %s: operation status %d", ids[i], r.StatusCode)
					}
				}
				return nil
			}, nil
		}}, nil
}

// HandlerSingle sends one-message invocations (POST /ProcessOrder) over
// loopback HTTP to the handler served in this process, as the Functions
// host does.
func HandlerSingle(t Target, conc int) (*Variant, error) {
	return handlerVariant(t, fmt.Sprintf("handler, one message per invocation (POST /ProcessOrder), %d at once", conc), 1, conc, 0)
}

// HandlerDirect calls the handler's ServeHTTP in process with one-message
// invocations: the handler's work without the loopback HTTP hop.
func HandlerDirect(t Target, conc int) (*Variant, error) {
	rig, err := NewRig(t, PoolSize, 0)
	if err != nil {
		return nil, err
	}
	return &Variant{Name: fmt.Sprintf("handler, one message per invocation, ServeHTTP called in process (no HTTP hop), %d at once", conc), PerOp: 1, Concurrency: conc,
		counter: rig.Counter, outcomes: rig.Outcomes,
		prepare: func(prefix string, ops int) (func(context.Context, int) error, error) {
			reqs, err := singleRequests(prefix, ops)
			if err != nil {
				return nil, err
			}
			return func(_ context.Context, i int) error {
				_, err := rig.Invoke(handler.FunctionProcessOrder, reqs[i])
				return err
			}, nil
		}}, nil
}

func singleRequests(prefix string, ops int) ([][]byte, error) {
	reqs := make([][]byte, ops)
	for i := range reqs {
		id := fmt.Sprintf("%s-%06d", prefix, i)
		var err error
		if reqs[i], err = SingleInvocation(Delivery{Body: OrderBody(id, "CUST-1"), MessageID: id, DeliveryCount: 1}); err != nil {
			return nil, err
		}
	}
	return reqs, nil
}

// HandlerBatch sends batch invocations (POST /ProcessOrderBatch) of perOp
// messages, conc at once (the host's listener sends one at a time), to a
// handler that writes parallelism messages of a batch at once (0: its
// default).
func HandlerBatch(t Target, perOp, conc, parallelism int) (*Variant, error) {
	if parallelism <= 0 {
		parallelism = handler.DefaultBatchParallelism
	}
	name := fmt.Sprintf("handler, %d messages per invocation (POST /ProcessOrderBatch), %d invocation(s) at once, BATCH_PARALLELISM %d", perOp, conc, parallelism)
	return handlerVariant(t, name, perOp, conc, parallelism)
}

func handlerVariant(t Target, name string, perOp, conc, parallelism int) (*Variant, error) {
	rig, err := NewRig(t, PoolSize, parallelism)
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(rig.Handler)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Minute}
	function := handler.FunctionProcessOrder
	if perOp > 1 {
		function = handler.FunctionProcessOrderBatch
	}
	url := srv.URL + "/" + function
	return &Variant{Name: name, PerOp: perOp, Concurrency: conc, counter: rig.Counter, outcomes: rig.Outcomes,
		close: srv.Close,
		prepare: func(prefix string, ops int) (func(context.Context, int) error, error) {
			reqs := make([][]byte, ops)
			for i := range reqs {
				ds := make([]Delivery, perOp)
				for j := range ds {
					id := fmt.Sprintf("%s-%06d", prefix, i*perOp+j)
					ds[j] = Delivery{Body: OrderBody(id, "CUST-1"), MessageID: id, DeliveryCount: 1}
				}
				var err error
				if perOp == 1 {
					reqs[i], err = SingleInvocation(ds[0])
				} else {
					reqs[i], err = BatchInvocation(ds)
				}
				if err != nil {
					return nil, err
				}
			}
			return func(ctx context.Context, i int) error {
				return post(ctx, hc, url, reqs[i])
			}, nil
		}}, nil
}

// post sends one invocation and wants 200.
func post(ctx context.Context, hc *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", url, resp.StatusCode, b)
	}
	return nil
}
