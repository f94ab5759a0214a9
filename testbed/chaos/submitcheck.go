package chaos

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// problemKeyReused is the anchor of the problem type SubmitOrder answers a
// key reused with another payload with (docs/http-api.md).
const problemKeyReused = "#idempotency-key-reused"

// SubmitChecks judge the HTTP traffic from the answers the clients got; the
// orders it created are judged with the queue's by checkRun, through the
// messages SubmitOrder put on the queue (Tracker.Enqueued):
//
//   - every key ends with an accepted answer (its last request, for each
//     copy sent at once, got a 2xx);
//   - one execution per key: at most one 2xx answer is not marked
//     Idempotent-Replayed;
//   - every replay is identical to the first answer: every 2xx of a key has
//     the same status, body and Location;
//   - every same-key conflict is refused: the other payload gets 422
//     idempotency-key-reused, never a 2xx;
//   - every accepted order is stored (stored holds the orderIds with an
//     order document): a 202 whose output send failed must be repaired by
//     the replay re-sending it.
func SubmitChecks(subs []orderstream.Submission, answers []Answer, stored map[string]bool) []*Check {
	byKey := map[string][]Answer{}
	for _, a := range answers {
		byKey[a.Key] = append(byKey[a.Key], a)
	}
	keys := make([]string, 0, len(subs))
	for _, s := range subs {
		keys = append(keys, s.Key)
	}
	sort.Strings(keys)

	accepted := &Check{Name: "HTTP: every submission ends accepted (a 2xx for each request, after retries)"}
	once := &Check{Name: "HTTP: one execution per Idempotency-Key (at most one 2xx not marked Idempotent-Replayed)"}
	same := &Check{Name: "HTTP: every replay identical to the first answer (status, body, Location)"}
	refused := &Check{Name: "HTTP: every same-key conflict refused (422 idempotency-key-reused)"}
	kept := &Check{Name: "HTTP: every accepted order stored (a failed output send repaired by the replay)"}
	acceptedIDs := map[string]bool{}
	for _, a := range answers {
		if !a.Reuse && a.Status/100 == 2 {
			acceptedIDs[a.OrderID] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(acceptedIDs)) {
		kept.Checked++
		if !stored[id] {
			kept.fail("order %s was accepted over HTTP but has no order document", id)
		}
	}
	for _, k := range keys {
		as := byKey[k]
		accepted.Checked++
		once.Checked++
		last := map[int]Answer{} // copy -> its last answer to the first payload
		var first *Answer
		fresh := 0
		var reuse *Answer
		for i := range as {
			a := &as[i]
			if a.Reuse {
				if a.Status/100 == 2 {
					refused.fail("key %s: the other payload was accepted: %d %q", k, a.Status, a.Body)
				}
				reuse = a
				continue
			}
			last[a.Copy] = *a
			if a.Status/100 != 2 {
				continue
			}
			if !a.Replayed {
				fresh++
			}
			if first == nil {
				first = a
				same.Checked++
				continue
			}
			same.Checked++
			if a.Status != first.Status || a.Body != first.Body || a.Location != first.Location {
				same.fail("key %s: answer %d (attempt %d) is %d %q at %q, the first was %d %q at %q", k, i, a.Attempt,
					a.Status, a.Body, a.Location, first.Status, first.Body, first.Location)
			}
		}
		if reuse != nil {
			refused.Checked++
			if reuse.Status != http.StatusUnprocessableEntity || !strings.HasSuffix(reuse.ProblemType, problemKeyReused) {
				refused.fail("key %s: the other payload's last answer is %s, want 422 %s", k, describe(*reuse), problemKeyReused)
			}
		}
		if fresh > 1 {
			once.fail("key %s: %d answers were not replays", k, fresh)
		}
		for c, a := range last {
			if a.Status/100 != 2 {
				accepted.fail("key %s (order %s), copy %d: last answer %s after %d attempts", k, a.OrderID, c, describe(a), a.Attempt)
			}
		}
		if len(last) == 0 {
			accepted.fail("key %s: never sent", k)
		}
	}
	return []*Check{accepted, once, same, refused, kept}
}

func describe(a Answer) string {
	if a.Status == 0 {
		return "none (" + a.Err + ")"
	}
	return fmt.Sprintf("%d %s", a.Status, a.ProblemType)
}

// Checks are every check of the ledger's traffic (SubmitChecks and
// ReadBackCheck) against the stored orders: orderId to the requestHash of
// its order document.
func (l *SubmitLedger) Checks(stored map[string]string) []*Check {
	have := make(map[string]bool, len(stored))
	for id := range stored {
		have[id] = true
	}
	return append(SubmitChecks(l.subs, l.Answers(), have), ReadBackCheck(l.Views(), stored))
}
