package hostemu

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
)

// The app's own policy reads as function.json says, and maxRetryCount n
// means n executions in all (the SDK's ++attempt >= MaxRetryCount).
func TestRetryPolicyOfPublishOrderEvents(t *testing.T) {
	app := repoApp(t)
	p, err := LoadRetryPolicy(app.Function("PublishOrderEvents"))
	if err != nil || p == nil {
		t.Fatalf("policy %v, %v", p, err)
	}
	want := RetryPolicy{Strategy: "exponentialBackoff", MaxRetryCount: 20, MinimumInterval: 5 * time.Second, MaximumInterval: 5 * time.Minute}
	if *p != want {
		t.Errorf("policy %+v, want %+v", *p, want)
	}
	if p.Spent(18) || !p.Spent(19) {
		t.Errorf("Spent(18) %v, Spent(19) %v: want the 20th failed execution to be the last", p.Spent(18), p.Spent(19))
	}
	forever := RetryPolicy{Strategy: "fixedDelay", MaxRetryCount: -1, DelayInterval: time.Second}
	if forever.Spent(1 << 20) {
		t.Error("maxRetryCount -1 was spent")
	}
	if p, err := LoadRetryPolicy(app.Function("ProcessOrder")); p != nil || err != nil {
		t.Errorf("ProcessOrder has no retry block: %v, %v", p, err)
	}
}

// The delays are the WebJobs SDK's randomized exponential back-off: the
// minimum, then minimum + 2^(k-1) × minimum × [0.8, 1.2), capped at the
// maximum, which then repeats.
func TestExponentialBackoffDelays(t *testing.T) {
	p := &RetryPolicy{Strategy: "exponentialBackoff", MaxRetryCount: -1, MinimumInterval: 5 * time.Second, MaximumInterval: 5 * time.Minute}
	d := p.delays(rand.New(rand.NewPCG(1, 2)))
	var got []time.Duration
	for range 10 {
		got = append(got, d.next())
	}
	if got[0] != 5*time.Second {
		t.Errorf("first delay %s, want the minimum", got[0])
	}
	for k := 1; k < 6; k++ {
		step := float64(uint(1)<<(k-1)) * float64(5*time.Second)
		lo, hi := 5*time.Second+time.Duration(0.8*step), 5*time.Second+time.Duration(1.2*step)
		if got[k] < lo || got[k] >= hi {
			t.Errorf("delay %d = %s, want in [%s, %s)", k+1, got[k], lo, hi)
		}
	}
	if got[8] != 5*time.Minute || got[9] != 5*time.Minute {
		t.Errorf("delays %v, want the maximum from the 8th on", got)
	}
	fixed := (&RetryPolicy{Strategy: "fixedDelay", DelayInterval: 3 * time.Second}).delays(nil)
	if a, b := fixed.next(), fixed.next(); a != 3*time.Second || b != 3*time.Second {
		t.Errorf("fixed delays %s, %s", a, b)
	}
}

func TestLoadRetryPolicyRefusesWhatTheHostRefuses(t *testing.T) {
	for name, retry := range map[string]string{
		"no count":         `{"strategy":"fixedDelay","delayInterval":"00:00:01"}`,
		"unknown strategy": `{"strategy":"linear","maxRetryCount":3}`,
		"bad interval":     `{"strategy":"fixedDelay","maxRetryCount":3,"delayInterval":"soon"}`,
		"min above max":    `{"strategy":"exponentialBackoff","maxRetryCount":3,"minimumInterval":"00:01:00","maximumInterval":"00:00:10"}`,
	} {
		path := filepath.Join(t.TempDir(), "function.json")
		if err := os.WriteFile(path, []byte(`{"retry":`+retry+`,"bindings":[]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if p, err := LoadRetryPolicy(&Function{Path: path}); err == nil {
			t.Errorf("%s: accepted as %+v", name, p)
		}
	}
}

// A checkpoint in the same second as the last one adds that second's
// etags; one in a later second keeps only the later second's.
func TestFeedPositionAfter(t *testing.T) {
	start := FeedPosition{TS: 10, Seen: []string{"a"}}
	same := start.after([]change{{ts: 10, etag: "b"}, {ts: 10, etag: "c"}})
	if same.TS != 10 || !slices.Equal(same.Seen, []string{"a", "b", "c"}) {
		t.Errorf("same second: %+v", same)
	}
	later := start.after([]change{{ts: 10, etag: "b"}, {ts: 12, etag: "d"}, {ts: 12, etag: "e"}})
	if later.TS != 12 || !slices.Equal(later.Seen, []string{"d", "e"}) {
		t.Errorf("later second: %+v", later)
	}
	if !slices.Equal(start.Seen, []string{"a"}) {
		t.Errorf("after changed its receiver: %+v", start)
	}
}

func TestCreationNumber(t *testing.T) {
	// The vercel emulator's _rid of its 1st, 256th and 65536th document.
	for rid, want := range map[string]uint32{"lV8dAK7u9cABAAAAAAAAAA==": 1, "lV8dAK7u9cAAAQAAAAAAAA==": 256, "lV8dAK7u9cAAAAEAAAAAAA==": 65536, "not base64": 0, "": 0} {
		if got := creationNumber(rid); got != want {
			t.Errorf("creationNumber(%q) = %d, want %d", rid, got, want)
		}
	}
}

// The envelope is the host's: the reference fixture of the handler's tests,
// byte for byte, when the documents, clock and GUID are its own.
func TestEncodeDocumentsMatchesTheFixture(t *testing.T) {
	root, err := cosmostest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "handler", "testdata", "changefeed", "cosmosdb-trigger.json"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []json.RawMessage
	if err := documents(bytes.NewReader(want), &docs); err != nil {
		t.Fatal(err)
	}
	raw := make([][]byte, len(docs))
	for i, d := range docs {
		raw[i] = d
	}
	app := repoApp(t)
	e := &Encoder{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 31, 0, 723203000, time.UTC) },
		NewGUID: func() string { return "0d00378b-6426-4af1-9fc0-0793f4ce3745" }}
	// The fixture is spaced; the members' values must be the same.
	assertSameJSON(t, e.Documents(app.Function("PublishOrderEvents"), raw), want)
}
