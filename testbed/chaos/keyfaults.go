package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// KeyFaults aims faults at the completion of idempotency key records (the
// ETag-conditional replace that turns a `started` record into `succeeded`,
// docs/contract.md §13), where the rates alone would hit a run's few
// hundred completions only by chance, and rarely in the two windows that
// matter:
//
//   - a kill: the handler gets SIGKILL while its completion is on the way
//     to Cosmos, which never sees it; the key stays `started`, retries are
//     answered 409 until its lease ends, then one takes it over and runs
//     the work again;
//   - a lost answer: Cosmos stores the completion and the answer never
//     reaches the handler, whose own retry or release is then fenced by the
//     ETag; the client's retry gets the stored answer as a replay.
//
// Each fault goes to a key of its own, chosen before the run among the
// submissions sent once, with no other fault of their own (no early
// timeout, no rival), so the checks can say what each key's answers
// must be. Pass Pick as ProxyConfig.Pick and setKill once the handler runs.
type KeyFaults struct {
	records KeyRecords

	mu     sync.Mutex
	kill   func(instance int) error
	target map[string]keyFault // Idempotency-Key -> the fault aimed at it
	// eligible are the keys a fault may go to; a kill aimed at a key whose
	// completion comes fewer than gap completions after the last kill is
	// deferred (deferred counts them) to the next eligible key's
	// completion. Counted, not timed: a run reruns from its seed.
	eligible  map[string]bool
	deferred  int
	gap       int
	sinceKill int
	// dropped are owners (attempts) whose handler was killed: their
	// completion, and any resend of it, never reaches Cosmos.
	dropped map[string]bool
	// done are the keys whose fault took place, and when it could not
	// (the kill failed) why.
	done    map[string]keyFault
	skipped []string
}

type keyFault int

const (
	keyKill keyFault = iota + 1
	keyLostAnswer
)

// newKeyFaults aims kills and lostAnswers at as many submissions, spread
// over subs, of the records in the key container.
func newKeyFaults(keyContainer string, subs []orderstream.Submission, kills, lostAnswers int) *KeyFaults {
	k := &KeyFaults{records: NewKeyRecords(keyContainer), target: map[string]keyFault{},
		dropped: map[string]bool{}, done: map[string]keyFault{}, eligible: map[string]bool{}, gap: killGap, sinceKill: killGap}
	var eligible []string
	for _, s := range subs {
		if s.Copies <= 1 && s.FirstTimeout == 0 && s.Rival == nil {
			eligible = append(eligible, s.Key)
			k.eligible[s.Key] = true
		}
	}
	n := min(kills+lostAnswers, len(eligible))
	for i := range n {
		f := keyLostAnswer
		if i%2 == 0 && kills > 0 || lostAnswers == 0 {
			f, kills = keyKill, kills-1
		} else {
			lostAnswers--
		}
		k.target[eligible[(2*i+1)*len(eligible)/(2*n)]] = f
	}
	return k
}

// killGap is the least number of key completions between two kills
// KeyFaults makes: completions bunch up after an outage, and kills in a row
// would meet a handler still restarting.
const killGap = 10

// setKill gives the means to kill an instance's handler.
func (k *KeyFaults) setKill(kill func(instance int) error) {
	k.mu.Lock()
	k.kill = kill
	k.mu.Unlock()
}

// Pick is a ProxyConfig.Pick: it drops the completion of a key aimed at
// for a kill after killing the handler that sent it, and loses the answer
// to the first completion of a key aimed at for a lost answer. Any other
// request is left to the rates.
func (k *KeyFaults) Pick(instance int, method, path string, body []byte) faults.Fault {
	if method != http.MethodPut || !k.records.Match(path) {
		return -1
	}
	var rec idempotency.Record
	if json.Unmarshal(body, &rec) != nil || rec.State == idempotency.Started {
		return -1 // a take-over, or not a record
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dropped[rec.Owner] {
		return faults.Drop // the killed handler's completion, sent again
	}
	k.sinceKill++
	f, aimed := k.target[rec.Key]
	if !aimed && k.deferred > 0 && k.eligible[rec.Key] && k.done[rec.Key] == 0 {
		f, aimed = keyKill, true
		k.deferred--
	}
	if !aimed {
		return -1
	}
	delete(k.target, rec.Key)
	switch f {
	case keyKill:
		if k.sinceKill < k.gap {
			k.deferred++ // the next eligible key gets it
			return -1
		}
		if k.kill == nil {
			k.skipped = append(k.skipped, rec.Key+": the handler was not running yet")
			return -1
		}
		if err := k.kill(instance); err != nil {
			k.skipped = append(k.skipped, fmt.Sprintf("%s: kill: %v", rec.Key, err))
			return -1
		}
		k.dropped[rec.Owner] = true
		k.done[rec.Key] = keyKill
		k.sinceKill = 0
		return faults.Drop
	default:
		k.done[rec.Key] = keyLostAnswer
		return faults.LostAnswer
	}
}

// KeyRecords matches the request paths of one key container's record
// documents, as the proxy sees them (ProxyConfig.Pick, Hold, Observe).
type KeyRecords string // "/colls/<key container>/docs/"

// NewKeyRecords matches the records of keyContainer.
func NewKeyRecords(keyContainer string) KeyRecords {
	return KeyRecords("/colls/" + keyContainer + "/docs/")
}

// Match reports whether p is the path of one key record's document.
func (r KeyRecords) Match(p string) bool {
	_, id, ok := strings.Cut(p, string(r))
	return ok && id != "" && !strings.Contains(id, "/")
}

// keyFaultCounts are what KeyFaults did.
type keyFaultCounts struct {
	Kills, LostAnswers int
	// Missed are the faults aimed at keys whose completion never came (or
	// whose kill failed), with why when known.
	Missed  int
	Skipped []string
}

// Counts returns what took place so far.
func (k *KeyFaults) Counts() keyFaultCounts {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := keyFaultCounts{Missed: len(k.target) + k.deferred + len(k.skipped), Skipped: slices.Clone(k.skipped)}
	for _, f := range k.done {
		if f == keyKill {
			c.Kills++
		} else {
			c.LostAnswers++
		}
	}
	return c
}

// Checks cover the answers of the keys hit: a killed key's clients were
// told 409 (in flight) and then got a 2xx, which only an attempt that took
// the key over can have stored, since every completion of the killed one
// was dropped (fresh, or a replay when the taker's own answer did not
// reach its client); a key whose completion answer was lost got its 2xx
// only as a replay. Either way its last answer is a 2xx; that its order is
// stored once is the queue checks' (one order per orderId).
func (k *KeyFaults) Checks(answers []Answer) []*verify.Check {
	k.mu.Lock()
	done := maps.Clone(k.done)
	k.mu.Unlock()
	byKey := map[string][]Answer{}
	for _, a := range answers {
		if done[a.Key] != 0 && !a.Reuse {
			byKey[a.Key] = append(byKey[a.Key], a)
		}
	}
	keys := slices.Sorted(maps.Keys(done))
	killed := &verify.Check{Name: "HTTP: a key whose handler was killed between its order's batch and the key's completion answers 409 in flight until its lease ends, then is taken over (ends in a final answer)"}
	lost := &verify.Check{Name: "HTTP: a key completion whose answer was lost ends as a replay (every final answer marked Idempotent-Replayed)"}
	for _, key := range keys {
		as := byKey[key]
		inFlight, fresh, replays := 0, 0, 0
		for _, a := range as {
			switch {
			case final(a) && a.Replayed:
				replays++
			case final(a):
				fresh++
			case a.Status == http.StatusConflict, a.Status == http.StatusServiceUnavailable:
				inFlight++ // a 503: the store did not answer (an outage) while the lease held
			}
		}
		var last Answer
		if len(as) > 0 {
			last = as[len(as)-1]
		}
		switch done[key] {
		case keyKill:
			killed.Checked++
			switch {
			case inFlight == 0:
				killed.Fail("key %s: no 409 (or 503) after the kill (answers %s)", key, statuses(as))
			case fresh > 1 || !final(last):
				killed.Fail("key %s: want a final answer last, at most one not replayed (answers %s)", key, statuses(as))
			}
		case keyLostAnswer:
			lost.Checked++
			if fresh != 0 || replays == 0 || !final(last) {
				lost.Fail("key %s: want only replayed final answers, the last one of them (answers %s)", key, statuses(as))
			}
		}
	}
	return []*verify.Check{killed, lost}
}

// statuses lists answers as "500 409 409 201r" (r: replayed, -: none).
func statuses(as []Answer) string {
	parts := make([]string, len(as))
	for i, a := range as {
		switch {
		case a.Status == 0:
			parts[i] = "-"
		case a.Replayed:
			parts[i] = fmt.Sprintf("%dr", a.Status)
		default:
			parts[i] = fmt.Sprint(a.Status)
		}
	}
	return strings.Join(parts, " ")
}
