package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// PoolSize is the Cosmos connection pool of every client the bench makes:
// cmd/handler's COSMOS_MAX_CONNS default.
const PoolSize = 100

// Rig is the handler as cmd/handler wires it, over a Cosmos client whose
// requests are counted and with a log that counts outcomes.
type Rig struct {
	Counter  *Counter
	Outcomes *OutcomeLog
	Handler  http.Handler
}

// NewRig opens a fresh client (no requests made yet) and builds the handler,
// with batchParallelism messages of a batch at once (0: the handler's
// default).
func NewRig(t Target, batchParallelism int) (*Rig, error) {
	return newRig(t, func(_ *cosmos.Store, cfg *handler.Config) { cfg.BatchParallelism = batchParallelism })
}

// newRig opens a fresh client and builds the handler over it, with the
// settings configure adds.
func newRig(t Target, configure func(*cosmos.Store, *handler.Config)) (*Rig, error) {
	c := NewCounter(cosmos.NewTransport(PoolSize))
	store, err := cosmos.Open(t.Options(c), t.Database, t.Container)
	if err != nil {
		return nil, err
	}
	log := NewOutcomeLog()
	cfg := handler.Config{
		Processor:       &orders.Processor{Store: store},
		Logger:          slog.New(log),
		MessageDeadline: 30 * time.Second,
	}
	configure(store, &cfg)
	return &Rig{Counter: c, Outcomes: log, Handler: handler.NewServer(cfg)}, nil
}

// Invoke serves one invocation in process and wants 200.
func (r *Rig) Invoke(function string, request []byte) error {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/"+function, bytes.NewReader(request))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Azure-Functions-InvocationId", "bench")
	r.Handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return fmt.Errorf("%s answered %d: %s", function, rec.Code, rec.Body.Bytes())
	}
	return nil
}

// deliver serves one delivery as a POST /ProcessOrder invocation in process.
func (r *Rig) deliver(d hostemu.Delivery) error {
	req, err := SingleInvocation(d)
	if err != nil {
		return err
	}
	return r.Invoke(handler.FunctionProcessOrder, req)
}

// variant is a Variant over the rig: its requests and outcomes are the
// rig's.
func (r *Rig) variant(name string, perOp, conc int, prepare preparer) *Variant {
	return &Variant{Name: name, PerOp: perOp, Concurrency: conc, counter: r.Counter, outcomes: r.Outcomes, prepare: prepare}
}

// post returns a function that sends one invocation to url over HTTP with
// hc and wants 200.
func post(hc *http.Client, url string) func(context.Context, []byte) error {
	return func(ctx context.Context, body []byte) error {
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
}
