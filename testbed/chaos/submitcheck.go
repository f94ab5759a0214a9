package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/ordersink/orders-consumer/testbed/orderstream"
	"github.com/ordersink/orders-consumer/testbed/verify"
)

// Anchors of the problem types the checks expect (docs/http-api.md).
const (
	problemKeyReused    = "#idempotency-key-reused"
	problemOrderIDTaken = "#order-id-taken"
	problemNotFound     = "#order-not-found"
)

// viewBookkeeping are the members of a stored order document the public
// view of an order must never show (docs/http-api.md).
var viewBookkeeping = []string{"id", "type", "messageId", "owner", "submissionId", "_rid", "_self", "_etag", "_attachments", "_ts"}

// apiOrder is what the documents of one orderId submitted over HTTP hold.
type apiOrder struct {
	orders      int    // order documents (one, or none)
	requestHash string // the order document's
	owner       string
	events      []string // the requestHash of each outbox event
}

// apiOrders reads the documents of the HTTP traffic's orderIds, by type.
func apiOrders(docs map[string][]json.RawMessage) map[string]*apiOrder {
	out := map[string]*apiOrder{}
	at := func(id string) *apiOrder {
		if out[id] == nil {
			out[id] = &apiOrder{}
		}
		return out[id]
	}
	for _, raw := range docs["order"] {
		var d struct {
			OrderID     string `json:"orderId"`
			RequestHash string `json:"requestHash"`
			Owner       string `json:"owner"`
		}
		if json.Unmarshal(raw, &d) == nil {
			o := at(d.OrderID)
			o.orders++
			o.requestHash, o.owner = d.RequestHash, d.Owner
		}
	}
	for _, raw := range docs["outboxEvent"] {
		var h verify.DocHead
		if json.Unmarshal(raw, &h) == nil {
			o := at(h.OrderID)
			o.events = append(o.events, h.RequestHash)
		}
	}
	return out
}

// isReceipt reports whether a 2xx body is an order's receipt: orderId,
// requestHash and hashVersion, the answer to a client that sent the
// content of an order it does not own (docs/http-api.md).
func isReceipt(body string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(body), &m) != nil || len(m) != 3 {
		return false
	}
	for _, k := range []string{"orderId", "requestHash", "hashVersion"} {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// ownerOf is the client scope SubmitOrder records for a client presenting
// the function key named client (docs/http-api.md, "Keys and scope").
func ownerOf(client string) string { return "key:" + client }

// keyAnswers are one Idempotency-Key's answers to its own payload, its
// first final one (Err "no final answer" without one) and the last one of
// each copy sent at once.
type keyAnswers struct {
	sub   orderstream.Submission
	all   []Answer
	first Answer
	last  map[int]Answer
	reuse *Answer // the last answer to the other payload
}

// final reports whether a is an answer a careful client stops at.
func final(a Answer) bool {
	switch {
	case a.Status/100 == 2:
		return true
	case a.Status == http.StatusConflict:
		return strings.HasSuffix(a.ProblemType, problemOrderIDTaken)
	}
	return false
}

// SubmitChecks check the HTTP traffic from the answers the clients got and
// the documents of its orderIds (by type), against the invariant of
// docs/http-api.md:
//
//   - every submission ends with a final answer: 201 or 200 (the
//     client's order, or its receipt when the order is another's with this
//     content: a fall-back from the queue), or 409 order-id-taken when the
//     orderId holds other content;
//   - one execution per key: at most one final answer is not marked
//     Idempotent-Replayed, and every final answer of a key is identical
//     to its first (status, body, Location);
//   - a key reused with another payload is refused (422);
//   - one order per orderId, with its outbox event, and every 2xx answer's
//     order stored with that answer's fingerprint and the answering
//     client as owner (a receipt: stored with its fingerprint); exactly
//     one key of an orderId is answered 201, none when the queue stored it
//     first;
//   - two clients racing for one orderId: one 201, one 409
//     order-id-taken, the winner's order stored.
func SubmitChecks(subs []orderstream.Submission, answers []Answer, docs map[string][]json.RawMessage) []*verify.Check {
	stored := apiOrders(docs)
	keys := groupAnswers(subs, answers)
	c := &submitChecks{
		ended:   &verify.Check{Name: "HTTP: every submission ends with a final answer (201, 200, or 409 order-id-taken), after retries"},
		once:    &verify.Check{Name: "HTTP: one execution per Idempotency-Key, every replay identical to the first answer (status, body, Location)"},
		refused: &verify.Check{Name: "HTTP: every key reused with another payload refused (422 idempotency-key-reused)"},
		kept:    &verify.Check{Name: "HTTP: one order per real-world order: one per orderId, whichever path stored it first; every 2xx answer's order stored with its fingerprint, owned by the answering client or answered with its receipt, with its outbox event"},
		races:   &verify.Check{Name: "HTTP: two clients racing for one orderId: one 201, one 409 order-id-taken, the winner's order stored"},
		created: map[string][]string{},
	}
	byOrder := map[string][]*keyAnswers{}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		k := keys[key]
		byOrder[k.sub.OrderID] = append(byOrder[k.sub.OrderID], k)
		c.key(key, k, stored)
	}
	c.nameFallbacks(keys)
	for _, id := range slices.Sorted(maps.Keys(byOrder)) {
		c.order(id, stored[id])
	}
	for _, s := range subs {
		if s.Rival != nil {
			c.race(s, keys, stored)
		}
	}
	return []*verify.Check{c.ended, c.once, c.refused, c.kept, c.races}
}

// groupAnswers files each answer under its key: the last per copy, all of
// them in order, the first final one, and the answer to the other payload
// under that key.
func groupAnswers(subs []orderstream.Submission, answers []Answer) map[string]*keyAnswers {
	keys := map[string]*keyAnswers{}
	for _, s := range subs {
		keys[s.Key] = &keyAnswers{sub: s, first: Answer{Err: "no final answer"}, last: map[int]Answer{}}
	}
	for _, a := range answers {
		k := keys[a.Key]
		if k == nil {
			continue
		}
		if a.Reuse {
			k.reuse = &a
			continue
		}
		k.all = append(k.all, a)
		k.last[a.Copy] = a
		if final(a) && !final(k.first) {
			k.first = a
		}
	}
	return keys
}

// submitChecks are the checks SubmitChecks returns, and the keys answered
// 201 per orderId.
type submitChecks struct {
	ended, once, refused, kept, races *verify.Check
	created                           map[string][]string // orderId -> keys answered 201
}

// key checks one Idempotency-Key: a final answer for every copy, one
// execution, replays identical to the first answer, that answer's order
// stored, and the other payload refused.
func (c *submitChecks) key(key string, k *keyAnswers, stored map[string]*apiOrder) {
	c.ended.Checked++
	c.once.Checked++
	if len(k.last) == 0 {
		c.ended.Fail("key %s (order %s): never sent", key, k.sub.OrderID)
	}
	for n, a := range k.last {
		if !final(a) {
			c.ended.Fail("key %s (order %s), copy %d: last answer %s after %d attempts", key, a.OrderID, n, describe(a), a.Attempt)
		}
	}
	first, fresh := k.first, 0
	for i, a := range k.all {
		if !final(a) {
			continue
		}
		if !a.Replayed {
			fresh++
		}
		if a.Status != first.Status || a.Body != first.Body || a.Location != first.Location {
			c.once.Fail("key %s: answer %d (attempt %d) is %d %q at %q, the first was %d %q at %q", key, i, a.Attempt,
				a.Status, a.Body, a.Location, first.Status, first.Body, first.Location)
		}
	}
	if fresh > 1 {
		c.once.Fail("key %s: %d final answers were not replays", key, fresh)
	}
	if first.Status == http.StatusCreated {
		c.created[k.sub.OrderID] = append(c.created[k.sub.OrderID], key)
	}
	if final(first) {
		c.kept.Checked++
		if msg := checkAnswer(first, k.sub, stored[k.sub.OrderID]); msg != "" {
			c.kept.Fail("key %s (order %s): %s", key, k.sub.OrderID, msg)
		}
	}
	if k.reuse != nil {
		c.refused.Checked++
		if k.reuse.Status != http.StatusUnprocessableEntity || !strings.HasSuffix(k.reuse.ProblemType, problemKeyReused) {
			c.refused.Fail("key %s: the other payload's last answer is %s, want 422 %s", key, describe(*k.reuse), problemKeyReused)
		}
	}
}

// nameFallbacks adds to the name of the one-order check how many
// submissions were fall-backs from the queue and how many of them were
// answered the queue's order's receipt.
func (c *submitChecks) nameFallbacks(keys map[string]*keyAnswers) {
	fallbacks, receipts := 0, 0
	for _, k := range keys {
		if k.sub.Fallback {
			fallbacks++
			if k.first.Status == http.StatusOK && isReceipt(k.first.Body) {
				receipts++
			}
		}
	}
	if fallbacks > 0 {
		c.kept.Name += fmt.Sprintf(" (%d fall-backs from the queue: %d answered the queue's order's receipt)", fallbacks, receipts)
	}
}

// order checks one orderId: one order document with its one outbox event,
// and exactly one key answered 201 (none when the queue stored it).
func (c *submitChecks) order(id string, o *apiOrder) {
	c.kept.Checked++
	switch {
	case o == nil || o.orders == 0:
		if len(c.created[id]) > 0 {
			c.kept.Fail("order %s: answered 201 but no order document is stored", id)
		}
	case o.orders > 1:
		c.kept.Fail("order %s: %d order documents", id, o.orders)
	case len(o.events) != 1 || o.events[0] != o.requestHash:
		c.kept.Fail("order %s: outbox events %v, want one carrying %s", id, o.events, o.requestHash)
	case len(c.created[id]) != 1 && (o.owner != "" || len(c.created[id]) != 0):
		c.kept.Fail("order %s: %d keys answered 201 (%v), want exactly one (none when the queue stored it)", id, len(c.created[id]), c.created[id])
	}
}

// race checks two clients racing for one orderId: one 201, one 409
// order-id-taken showing no fingerprints, the winner's order stored.
func (c *submitChecks) race(s orderstream.Submission, keys map[string]*keyAnswers, stored map[string]*apiOrder) {
	c.races.Checked++
	a, b := keys[s.Key], keys[s.Rival.Key]
	winner, loser := a, b
	if b.first.Status == http.StatusCreated {
		winner, loser = b, a
	}
	w, l := winner.first, loser.first
	o := stored[s.OrderID]
	switch {
	case w.Status != http.StatusCreated || l.Status != http.StatusConflict || !strings.HasSuffix(l.ProblemType, problemOrderIDTaken):
		c.races.Fail("order %s: %s got %s, %s got %s; want one 201 and one 409 order-id-taken",
			s.OrderID, a.sub.Client, describe(a.first), b.sub.Client, describe(b.first))
	case o == nil || o.owner != ownerOf(winner.sub.Client) || o.requestHash != orderstream.ContentKey(winner.sub.Body):
		c.races.Fail("order %s: the stored order is not %s's (the 201's)", s.OrderID, winner.sub.Client)
	case strings.Contains(l.Body, "storedHash") || strings.Contains(l.Body, "requestHash"):
		c.races.Fail("order %s: the 409 to %s, who does not own it, shows fingerprints: %s", s.OrderID, loser.sub.Client, l.Body)
	}
}

// checkAnswer says what is wrong with a key's final answer given what
// its orderId's documents hold, or "".
func checkAnswer(a Answer, s orderstream.Submission, o *apiOrder) string {
	fingerprint := orderstream.ContentKey(s.Body)
	if a.Status/100 != 2 {
		// 409 order-id-taken: only when the orderId holds other content.
		if o != nil && o.orders > 0 && o.requestHash == fingerprint {
			return fmt.Sprintf("answered 409 order-id-taken although the order stored (owner %q) has this content", o.owner)
		}
		return ""
	}
	if isReceipt(a.Body) {
		switch {
		case a.Status != http.StatusOK:
			return fmt.Sprintf("a receipt answered %d", a.Status)
		case o == nil || o.orders == 0 || o.requestHash != fingerprint:
			return "answered a receipt, but no order with this content is stored"
		case o.owner == ownerOf(s.Client):
			return "answered a receipt for an order the client owns (its view was due)"
		case !strings.Contains(a.Body, `"`+fingerprint+`"`):
			return fmt.Sprintf("receipt %s does not carry the fingerprint %s", a.Body, fingerprint)
		}
		return ""
	}
	var view map[string]json.RawMessage
	var hash, orderID string
	if err := json.Unmarshal([]byte(a.Body), &view); err != nil {
		return fmt.Sprintf("%d answer is not an order: %v", a.Status, err)
	}
	_ = json.Unmarshal(view["requestHash"], &hash)
	_ = json.Unmarshal(view["orderId"], &orderID)
	for _, m := range viewBookkeeping {
		if _, ok := view[m]; ok {
			return fmt.Sprintf("%d answer shows %q", a.Status, m)
		}
	}
	switch {
	case orderID != s.OrderID || hash != fingerprint:
		return fmt.Sprintf("%d answer is order %s with %s, the request was %s with %s", a.Status, orderID, hash, s.OrderID, fingerprint)
	case o == nil || o.orders == 0:
		return fmt.Sprintf("answered %d but no order is stored", a.Status)
	case o.requestHash != hash || o.owner != ownerOf(s.Client):
		return fmt.Sprintf("answered %d with %s to %s, the stored order has %s, owner %q", a.Status, hash, s.Client, o.requestHash, o.owner)
	case a.Status == http.StatusCreated && a.Location != "/api/orders/"+s.OrderID:
		return fmt.Sprintf("201 at Location %q", a.Location)
	}
	return ""
}

func describe(a Answer) string {
	if a.Status == 0 {
		return "none (" + a.Err + ")"
	}
	return fmt.Sprintf("%d %s", a.Status, a.ProblemType)
}

// Checks are every check of the ledger's traffic (SubmitChecks and
// readBackCheck) against the documents of its orderIds, by type
// (takeDocuments).
func (l *SubmitLedger) Checks(docs map[string][]json.RawMessage) []*verify.Check {
	return append(SubmitChecks(l.submissions(), l.Answers(), docs), readBackCheck(l.Views(), apiOrders(docs)))
}

// takeDocuments splits a run's documents (by type) into those of the
// orderIds the ledger submitted over HTTP, checked by Checks, and the rest,
// checked with the queue's messages; an order a client also put on the queue
// (a fall-back) is checked both ways.
func (l *SubmitLedger) takeDocuments(docs map[string][]json.RawMessage) (rest, api map[string][]json.RawMessage) {
	ids, fallbacks := map[string]bool{}, map[string]bool{}
	for _, s := range l.subs {
		ids[s.OrderID] = true
		fallbacks[s.OrderID] = fallbacks[s.OrderID] || s.Fallback
	}
	rest, api = map[string][]json.RawMessage{}, map[string][]json.RawMessage{}
	for t, ds := range docs {
		for _, raw := range ds {
			var h verify.DocHead
			_ = json.Unmarshal(raw, &h)
			if ids[h.OrderID] {
				api[t] = append(api[t], raw)
			}
			if !ids[h.OrderID] || fallbacks[h.OrderID] {
				rest[t] = append(rest[t], raw)
			}
		}
	}
	return rest, api
}
