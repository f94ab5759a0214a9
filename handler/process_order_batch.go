package handler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// Batch-mode defaults.
const (
	// DefaultBatchParallelism bounds the messages of one batch processed at
	// once: host.json's maxMessageBatchSize. Every message is its own
	// partition and the host's listener runs one batch at a time, so a whole
	// batch is written in one round of requests, and it takes at most one
	// operation timeout, below the 1-minute lock that is never renewed for
	// batches. At 20 ms to Cosmos, 8 at once made a batch of 100 half as fast
	// as single messages (issue 16; docs/evidence/benchmarks.md).
	DefaultBatchParallelism = 100
	// DefaultMaxBatchRequestBytes bounds a batch invocation held in memory:
	// 100 messages (host.json maxMessageBatchSize) of 256 KB, encoded twice.
	DefaultMaxBatchRequestBytes = 64 << 20
)

// handleProcessOrderBatch serves the "cardinality": "many" variant. The host
// settles a batch all or nothing (docs/host-wire-format.md §1.5), so the answer is 200 only
// when every message reached a final outcome (its parking envelopes go out
// together in Outputs.parking), and non-2xx when any one must be retried: the
// whole batch is then redelivered, which is safe because every message is
// idempotent on its own.
func handleProcessOrderBatch(cfg Config) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := cfg.Now()
		invocationID := r.Header.Get("X-Azure-Functions-InvocationId")
		inv, err := readInvocation(w, r, cfg.MaxBatchRequestBytes)
		var ds []delivery
		if err == nil {
			ds, err = batchDeliveries(inv, invocationID)
		}
		if err != nil {
			cfg.undecodable(w, FunctionProcessOrderBatch, invocationID, err)
			return
		}
		// The batch's locks are never renewed: every message must be
		// decided, its parked bodies kept, and the answer sent, before the
		// lock expires.
		ctx, cancel := context.WithTimeout(r.Context(), cfg.BatchDeadline)
		defer cancel()
		results := cfg.processBatch(ctx, ds)
		cfg.answerBatch(ctx, w, invocationID, ds, results, start)
	}
}

// batchResult is one message's result and how long it took.
type batchResult struct {
	res  orders.Result
	took time.Duration
}

// processBatch decides every delivery, at most cfg.BatchParallelism at once,
// by ctx's deadline. Once one message has failed transiently the batch will
// be redelivered anyway, so messages not yet started are not attempted,
// unless a message of the batch is on its last delivery: then the batch may
// be completed (settle), and every message is attempted.
func (cfg Config) processBatch(ctx context.Context, ds []delivery) []batchResult {
	results := make([]batchResult, len(ds))
	slots := make(chan struct{}, cfg.batchWidth(len(ds)))
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		firstFail string
	)
	// A message on its last delivery may force the batch to complete
	// (settle); then every message deserves its attempt.
	lastAttempt := false
	for _, d := range ds {
		lastAttempt = lastAttempt || cfg.Processor.LastAttempt(d.deliveryCount)
	}
	for i := range ds {
		slots <- struct{}{}
		mu.Lock()
		skip := firstFail != "" && !lastAttempt
		cause := firstFail
		mu.Unlock()
		if skip {
			<-slots
			err := errors.New("not attempted: the batch is redelivered because " + cause)
			results[i].res = orders.Result{Outcome: orders.Transient, OrderID: orders.PeekOrderID(ds[i].body),
				Description: err.Error(), Err: err}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			begin := time.Now()
			res := cfg.processSafely(ctx, ds[i])
			results[i] = batchResult{res: res, took: time.Since(begin)}
			if res.Outcome == orders.Transient {
				mu.Lock()
				if firstFail == "" {
					firstFail = fmt.Sprintf("message %s failed: %s", ds[i].messageID, res.Description)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return results
}

// batchWidth is how many of a batch's n messages are written at once: all of
// them, up to cfg.BatchParallelism (which cmd/handler keeps within the
// connection pool). Nothing else throttles here: a 429 is retried by the
// Cosmos SDK after the delay Cosmos asks for, and then by the processor's
// retries, all within the batch's deadline.
func (cfg Config) batchWidth(n int) int {
	return max(1, min(n, cfg.BatchParallelism))
}

// processSafely is process for a worker goroutine, where a panic would end
// the process rather than one invocation.
func (cfg Config) processSafely(ctx context.Context, d delivery) (res orders.Result) {
	defer func() {
		if v := recover(); v != nil {
			res = orders.Result{Outcome: orders.Transient, OrderID: orders.PeekOrderID(d.body),
				Description: fmt.Sprintf("panic: %v", v), Err: fmt.Errorf("panic: %v", v)}
		}
	}()
	return cfg.process(ctx, d)
}

// answerBatch answers 200 with every parking envelope when all messages are
// final, and 503 when any is not; it logs one line per message and a
// summary with the counts by outcome.
func (cfg Config) answerBatch(ctx context.Context, w http.ResponseWriter, invocationID string, ds []delivery, results []batchResult, start time.Time) {
	requeued := cfg.settle(ds, results)
	envelopes := cfg.parkBatch(ctx, ds, results)
	out := newResult()
	var parked []*ParkingEnvelope
	counts := map[orders.Outcome]int{}
	retry := false
	for i, d := range ds {
		res := results[i].res
		counts[res.Outcome]++
		if envelopes[i] != nil {
			parked = append(parked, envelopes[i])
		}
		if !res.Outcome.Completes() {
			retry = true
		}
		out.Logs = append(out.Logs, d.humanLine(res))
		cfg.logInvocation(d, res, results[i].took)
	}
	status := http.StatusOK
	if retry {
		status = http.StatusServiceUnavailable
	} else {
		if len(parked) > 0 {
			out.Outputs[ParkingBinding] = parked
		}
		if len(requeued) > 0 {
			out.Outputs[RequeueBinding] = requeued
		}
	}
	summary := summarize(counts)
	out.Logs = append(out.Logs, fmt.Sprintf("%s: %d messages: %s", FunctionProcessOrderBatch, len(ds), summary))
	level := slog.LevelInfo
	if retry {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("function", FunctionProcessOrderBatch),
		slog.String("invocationId", invocationID),
		slog.Int("messages", len(ds)),
		slog.Int("parked", len(parked)),
		slog.Int("requeued", len(requeued)),
		slog.Bool("redeliver", retry),
		slog.Float64("durationMs", float64(time.Since(start).Microseconds())/1000),
	}
	for o, n := range counts {
		attrs = append(attrs, slog.Int("count."+string(o), n))
	}
	cfg.Logger.LogAttrs(context.Background(), level, "batch", attrs...)
	encode(w, cfg.Logger, status, out)
}

func summarize(counts map[orders.Outcome]int) string {
	if len(counts) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(counts))
	for o, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, o))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
