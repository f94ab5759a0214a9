package idemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/idempotency"
)

// Backend is a key store under test, and how a test reads a record back as
// stored.
type Backend interface {
	idempotency.Store
	// Document returns the stored JSON document of id, nil when none.
	Document(ctx context.Context, id string) (json.RawMessage, error)
}

// Features says what a backend cannot do, so the suite skips what it cannot
// show instead of failing on it.
type Features struct {
	// ReadOfMissingIsNotFound: a read of a record that does not exist is
	// answered 404. The local emulator answers 500 (docs/cosmos-emulators.md).
	ReadOfMissingIsNotFound bool
}

// TestStore runs the suite every [idempotency.Store] must pass against the
// store newStore returns (it may share one store between tests: every test
// uses its own ids).
// Pattern: One contract suite, every store (docs/design-patterns.md#one-contract-suite-every-store).
func TestStore(t *testing.T, f Features, newStore func(t *testing.T) Backend) {
	tests := []struct {
		name string
		run  func(t *testing.T, s Backend, f Features)
	}{
		{"ClaimCreates", testClaim},
		{"ClaimOfExistingKeyFails", testClaimExists},
		{"ConcurrentClaimsWinOnce", testConcurrentClaims},
		{"ReadOfMissingKeyIsNotFound", testReadMissing},
		{"CompleteWithClaimETag", testComplete},
		{"StaleCompletionIsFenced", testFencing},
		{"TakeOverWinsOnce", testTakeOver},
		{"ReplaceOfMissingKeyIsFenced", testReplaceMissing},
		{"ReleaseWithStaleETagIsFenced", testReleaseFenced},
		{"ReleaseFreesTheKey", testRelease},
		{"DocumentHasTTLAndFields", testDocument},
		{"ResponseRoundTrip", testResponseRoundTrip},
		{"EndedContextIsTransient", testEndedContext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t), f) })
	}
}

var keySeq atomic.Int64

// started returns a Started record with an id no other test uses.
func started(t *testing.T) idempotency.Record {
	t.Helper()
	scope := idempotency.Scope{Client: "key:" + strings.ReplaceAll(t.Name(), "/", "-"), Operation: "SubmitOrder",
		Key: fmt.Sprintf("key-%d-%d", time.Now().UnixNano(), keySeq.Add(1))}
	now := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	return idempotency.Record{ID: scope.ID(), Client: scope.Client, Operation: scope.Operation, Key: scope.Key,
		RequestHash: strings.Repeat("ab", 32), State: idempotency.Started, Owner: "owner-1",
		LeaseUntil: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now, TTL: 86400}
}

// completed returns r as Succeeded with a response.
func completed(r idempotency.Record, owner string) idempotency.Record {
	r.State, r.Owner, r.LeaseUntil = idempotency.Succeeded, owner, time.Time{}
	r.UpdatedAt = r.CreatedAt.Add(time.Second)
	r.Response = &idempotency.Response{Status: 201, Headers: map[string]string{"Location": "/api/orders/ORD-1"},
		Body: []byte(`{"orderId":"ORD-1"}`)}
	return r
}

func claim(t *testing.T, s Backend, r idempotency.Record) string {
	t.Helper()
	etag, err := s.Claim(context.Background(), r)
	if err != nil || etag == "" {
		t.Fatalf("claim %s: etag %q, %v; want an ETag", r.ID, etag, err)
	}
	return etag
}

func replace(t *testing.T, s Backend, r idempotency.Record, etag string) string {
	t.Helper()
	next, err := s.Replace(context.Background(), r, etag)
	if err != nil || next == "" || next == etag {
		t.Fatalf("replace %s with ETag %s: new ETag %q, %v; want another ETag", r.ID, etag, next, err)
	}
	return next
}

// wantStored checks that the stored record is want with ETag etag.
func wantStored(t *testing.T, s Backend, want idempotency.Record, etag string) {
	t.Helper()
	got, err := s.Read(context.Background(), want.ID)
	if err != nil {
		t.Fatalf("read %s: %v", want.ID, err)
	}
	if got.ETag != etag {
		t.Errorf("read %s: ETag %q, want %q", want.ID, got.ETag, etag)
	}
	got.ETag = ""
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("read %s:\n got %s\nwant %s", want.ID, g, w)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

// wantGone checks that no record id is stored.
func wantGone(t *testing.T, s Backend, id string) {
	t.Helper()
	if doc, err := s.Document(context.Background(), id); doc != nil || err != nil {
		t.Errorf("record %s is stored: %s, %v; want none", id, doc, err)
	}
}

func testClaim(t *testing.T, s Backend, _ Features) {
	r := started(t)
	wantStored(t, s, r, claim(t, s, r))
}

func testClaimExists(t *testing.T, s Backend, _ Features) {
	r := started(t)
	etag := claim(t, s, r)
	second := r
	second.Owner, second.RequestHash = "owner-2", strings.Repeat("cd", 32)
	_, err := s.Claim(context.Background(), second)
	wantErr(t, "second claim", err, idempotency.ErrExists)
	wantStored(t, s, r, etag)
}

func testConcurrentClaims(t *testing.T, s Backend, _ Features) {
	r := started(t)
	const n = 8
	var (
		wg           sync.WaitGroup
		won, refused atomic.Int64
		mu           sync.Mutex
		others       []error
	)
	for i := range n {
		wg.Go(func() {
			c := r
			c.Owner = fmt.Sprintf("owner-%d", i)
			_, err := s.Claim(context.Background(), c)
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, idempotency.ErrExists):
				refused.Add(1)
			default:
				mu.Lock()
				others = append(others, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 || refused.Load() != n-1 || len(others) > 0 {
		t.Errorf("%d concurrent claims: %d won, %d refused, errors %v; want 1, %d, none", n, won.Load(), refused.Load(), others, n-1)
	}
}

func testReadMissing(t *testing.T, s Backend, f Features) {
	if !f.ReadOfMissingIsNotFound {
		t.Skip("this backend does not answer a read of a missing record with 404")
	}
	_, err := s.Read(context.Background(), started(t).ID)
	wantErr(t, "read of a key never claimed", err, idempotency.ErrNotFound)
}

func testComplete(t *testing.T, s Backend, _ Features) {
	r := started(t)
	done := completed(r, r.Owner)
	wantStored(t, s, done, replace(t, s, done, claim(t, s, r)))
}

// testFencing: an attempt whose key was taken over completes with the ETag
// of its claim; the store refuses, and the newer attempt's record stays.
func testFencing(t *testing.T, s Backend, _ Features) {
	r := started(t)
	first := claim(t, s, r)
	taken := r
	taken.Owner, taken.LeaseUntil = "owner-2", r.LeaseUntil.Add(time.Hour)
	second := replace(t, s, taken, first)
	_, err := s.Replace(context.Background(), completed(r, r.Owner), first)
	wantErr(t, "completion with the ETag of a lost claim", err, idempotency.ErrFenced)
	wantStored(t, s, taken, second)
	done := completed(taken, taken.Owner)
	wantStored(t, s, done, replace(t, s, done, second))
}

func testTakeOver(t *testing.T, s Backend, _ Features) {
	r := started(t)
	stale := claim(t, s, r)
	const n = 6
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		winner idempotency.Record
		etag   string
		fenced int
		others []error
	)
	for i := range n {
		wg.Go(func() {
			taker := r
			taker.Owner = fmt.Sprintf("taker-%d", i)
			next, err := s.Replace(context.Background(), taker, stale)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				winner, etag = taker, next
			case errors.Is(err, idempotency.ErrFenced):
				fenced++
			default:
				others = append(others, err)
			}
		})
	}
	wg.Wait()
	if fenced != n-1 || len(others) > 0 || etag == "" {
		t.Fatalf("%d take-overs of one stale record: %d fenced, errors %v, winner ETag %q; want exactly one winner", n, fenced, others, etag)
	}
	wantStored(t, s, winner, etag)
}

func testReplaceMissing(t *testing.T, s Backend, _ Features) {
	r := started(t)
	etag := claim(t, s, r)
	if err := s.Release(context.Background(), r.ID, etag); err != nil {
		t.Fatal(err)
	}
	_, err := s.Replace(context.Background(), completed(r, r.Owner), etag)
	wantErr(t, "completion of a released key", err, idempotency.ErrFenced)
	wantGone(t, s, r.ID)
}

func testReleaseFenced(t *testing.T, s Backend, _ Features) {
	r := started(t)
	first := claim(t, s, r)
	taken := r
	taken.Owner = "owner-2"
	second := replace(t, s, taken, first)
	wantErr(t, "release with a stale ETag", s.Release(context.Background(), r.ID, first), idempotency.ErrFenced)
	wantStored(t, s, taken, second)
}

func testRelease(t *testing.T, s Backend, _ Features) {
	r := started(t)
	if err := s.Release(context.Background(), r.ID, claim(t, s, r)); err != nil {
		t.Fatalf("release: %v", err)
	}
	wantGone(t, s, r.ID)
	again := r
	again.Owner = "owner-2"
	wantStored(t, s, again, claim(t, s, again))
}

// testDocument checks the stored document's members by name: Cosmos DB
// expires a document by its top-level "ttl" and nothing else.
func testDocument(t *testing.T, s Backend, _ Features) {
	r := started(t)
	r.TTL = 3600
	etag := claim(t, s, r)
	done := completed(r, r.Owner)
	replace(t, s, done, etag)
	doc, err := s.Document(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(doc, &got); err != nil {
		t.Fatalf("stored document %s: %v", doc, err)
	}
	want := map[string]any{"id": r.ID, "ttl": 3600.0, "state": "succeeded", "client": r.Client, "operation": "SubmitOrder",
		"key": r.Key, "requestHash": r.RequestHash, "owner": r.Owner,
		"createdAt": "2026-12-01T10:00:00.123456789Z", "updatedAt": "2026-12-01T10:00:01.123456789Z"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("stored %q = %v, want %v", k, got[k], v)
		}
	}
	if _, ok := got["leaseUntil"]; ok {
		t.Errorf("a completed record keeps its lease: %s", doc)
	}
	resp, _ := got["response"].(map[string]any)
	if resp["status"] != 201.0 || resp["body"] != "eyJvcmRlcklkIjoiT1JELTEifQ==" {
		t.Errorf("stored response %v, want status 201 and the body in base64", resp)
	}
}

// testResponseRoundTrip: the body comes back byte for byte, whatever it
// holds (not UTF-8, NUL, JSON-looking text).
func testResponseRoundTrip(t *testing.T, s Backend, _ Features) {
	r := started(t)
	done := completed(r, r.Owner)
	done.State = idempotency.Failed
	done.Response = &idempotency.Response{Status: 422,
		Headers: map[string]string{"Content-Type": "application/problem+json", "X-Empty": ""},
		Body:    append([]byte(`{"title":"é \u2028 \"q\""}`), 0, 0xff, 0xfe, '\n')}
	etag := replace(t, s, done, claim(t, s, r))
	got, err := s.Read(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Response == nil || got.Response.Status != 422 || !bytes.Equal(got.Response.Body, done.Response.Body) ||
		fmt.Sprint(got.Response.Headers) != fmt.Sprint(done.Response.Headers) {
		t.Errorf("response read back %+v, want %+v", got.Response, done.Response)
	}
	wantStored(t, s, done, etag)
}

func testEndedContext(t *testing.T, s Backend, _ Features) {
	r := started(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, claimErr := s.Claim(ctx, r)
	_, readErr := s.Read(ctx, r.ID)
	for what, err := range map[string]error{"claim": claimErr, "read": readErr} {
		var se *idempotency.KeyStoreError
		if !errors.As(err, &se) || !se.Transient() || !strings.Contains(err.Error(), r.ID) {
			t.Errorf("%s under an ended context: %v (%T); want a transient *idempotency.KeyStoreError naming %s", what, err, err, r.ID)
		}
	}
}
