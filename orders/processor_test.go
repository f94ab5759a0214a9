package orders

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// memStore is an in-memory Store with the semantics of create-if-absent.
type memStore struct {
	mu        sync.Mutex
	orders    map[string]StoredFingerprint
	conflicts map[string]Conflict
	fail      error // returned by every call when set
}

func newMemStore() *memStore {
	return &memStore{orders: map[string]StoredFingerprint{}, conflicts: map[string]Conflict{}}
}

func (s *memStore) CreateOrder(_ context.Context, o *Order, _ Acceptance) (*StoredFingerprint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	if fp, ok := s.orders[o.ID]; ok {
		return &fp, nil
	}
	s.orders[o.ID] = StoredFingerprint{Hash: o.Hash, Version: HashVersion}
	return nil, nil
}

func (s *memStore) RecordConflict(_ context.Context, c Conflict) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.conflicts[c.ID()] = c
	return nil
}

func TestProcessorOutcomes(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	p := &Processor{Store: store}
	msg := func(body string, delivery int) Message {
		return Message{Body: []byte(body), MessageID: "ORD-2026-000123", DeliveryCount: delivery}
	}

	r := p.Process(ctx, msg(validBody, 1))
	if r.Outcome != Created || r.OrderID != "ORD-2026-000123" || r.IncomingHash == "" {
		t.Fatalf("first delivery: %+v", r)
	}
	r = p.Process(ctx, msg(withField("meta", `{"retry":1}`), 2))
	if r.Outcome != Duplicate || r.StoredHash != r.IncomingHash || r.Reason != "" {
		t.Fatalf("redelivery: %+v", r)
	}
	other := strings.Replace(validBody, `"quantity": 1`, `"quantity": 2`, 1)
	other = strings.Replace(other, `"44.98"`, `"49.98"`, 1)
	r = p.Process(ctx, msg(other, 1))
	if r.Outcome != Mismatch || r.Reason != HashMismatch || r.StoredHash == r.IncomingHash {
		t.Fatalf("mismatch: %+v", r)
	}
	if len(store.conflicts) != 1 {
		t.Errorf("conflict records = %d, want 1", len(store.conflicts))
	}
	p.Process(ctx, msg(other, 2))
	if len(store.conflicts) != 1 {
		t.Errorf("a redelivered mismatch added a record: %d", len(store.conflicts))
	}
	r = p.Process(ctx, msg(`{"orderId":"X"`, 1))
	if r.Outcome != Invalid || r.Reason != MalformedMessage {
		t.Fatalf("malformed: %+v", r)
	}
	r = p.Process(ctx, msg(withField("currency", `"eur"`), 1))
	if r.Outcome != Invalid || r.Reason != ValidationFailed || r.OrderID != "ORD-2026-000123" {
		t.Fatalf("invalid: %+v", r)
	}
}

func TestProcessorStoreFailures(t *testing.T) {
	throttled := &StoreError{Op: "create order", OrderID: "ORD-2026-000123", Status: 429, Transient: true, Err: errors.New("429 Too Many Requests")}
	tooLarge := &StoreError{Op: "create order", OrderID: "ORD-2026-000123", Status: 413, Err: errors.New("413 Request Entity Too Large")}
	tests := []struct {
		name     string
		err      error
		delivery int
		budget   int
		want     Outcome
		reason   Reason
	}{
		{"transient first delivery", throttled, 1, 0, Transient, ""},
		{"transient below budget", throttled, 8, 0, Transient, ""},
		{"transient at default budget", throttled, 9, 0, Exhausted, RetryBudgetExhausted},
		{"transient past budget", throttled, 12, 0, Exhausted, RetryBudgetExhausted},
		{"transient at custom budget", throttled, 3, 3, Exhausted, RetryBudgetExhausted},
		{"unknown error is transient", errors.New("boom"), 1, 0, Transient, ""},
		{"permanent store refusal", tooLarge, 1, 0, Invalid, ValidationFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := newMemStore()
			store.fail = tc.err
			p := &Processor{Store: store, RetryBudget: tc.budget}
			r := p.Process(context.Background(), Message{Body: []byte(validBody), DeliveryCount: tc.delivery})
			if r.Outcome != tc.want || r.Reason != tc.reason {
				t.Fatalf("outcome = %s/%s, want %s/%s (%s)", r.Outcome, r.Reason, tc.want, tc.reason, r.Description)
			}
			if !errors.Is(r.Err, tc.err) {
				t.Errorf("Err = %v, want %v", r.Err, tc.err)
			}
			if tc.want != Transient && !strings.Contains(r.Description, tc.err.Error()) {
				t.Errorf("description %q does not carry the cause", r.Description)
			}
		})
	}
}

func TestProcessorMessageIDDiffers(t *testing.T) {
	p := &Processor{Store: newMemStore()}
	r := p.Process(context.Background(), Message{Body: []byte(validBody), MessageID: "some-guid", DeliveryCount: 1})
	if r.Outcome != Created || !r.MessageIDDiffers {
		t.Fatalf("%+v", r)
	}
}

func TestProcessorConcurrentDuplicates(t *testing.T) {
	store := newMemStore()
	p := &Processor{Store: store}
	var wg sync.WaitGroup
	results := make([]Result, 32)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = p.Process(context.Background(), Message{Body: []byte(validBody), DeliveryCount: 1})
		}()
	}
	wg.Wait()
	count := map[Outcome]int{}
	for _, r := range results {
		count[r.Outcome]++
	}
	if count[Created] != 1 || count[Duplicate] != 31 {
		t.Fatalf("outcomes = %v, want 1 created and 31 duplicates", count)
	}
}
