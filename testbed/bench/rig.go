package bench

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/orders"
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
func NewRig(t Target, conns, batchParallelism int) (*Rig, error) {
	return newRig(t, conns, func(_ *cosmos.Store, cfg *handler.Config) { cfg.BatchParallelism = batchParallelism })
}

// newRig opens a fresh client and builds the handler over it, with the
// settings configure adds.
func newRig(t Target, conns int, configure func(*cosmos.Store, *handler.Config)) (*Rig, error) {
	c := NewCounter(cosmos.NewTransport(conns))
	store, err := t.Open(c)
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

// Invoke serves one invocation in process and returns the HTTP status.
func (r *Rig) Invoke(function string, request []byte) (int, error) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/"+function, bytes.NewReader(request))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Azure-Functions-InvocationId", "bench")
	r.Handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return rec.Code, fmt.Errorf("%s answered %d: %s", function, rec.Code, rec.Body.Bytes())
	}
	return rec.Code, nil
}
