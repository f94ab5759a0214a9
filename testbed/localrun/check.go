package localrun

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/ordersink/orders-consumer/testbed/hostemu"
	"github.com/ordersink/orders-consumer/testbed/orderstream"
)

// Parking reasons of docs/contract.md §6.
const (
	reasonHashMismatch = "HashMismatch"
	reasonValidation   = "ValidationFailed"
	reasonMalformed    = "MalformedMessage"
	reasonExhausted    = "RetryBudgetExhausted"
)

// maxProblems bounds the problems a report lists one by one.
const maxProblems = 20

// check compares what happened with what must have happened. It is exact
// under any interleaving: whichever content of an orderId Cosmos stored, each
// successful delivery of another content of that orderId must have parked
// exactly one HashMismatch envelope, and none of the stored content any.
func (r *Report) check(msgs []*hostemu.Message, invs []*hostemu.Invocation, stored []storedOrder, dls []hostemu.DeadLetter) {
	classes := make(map[*hostemu.Message]orderstream.Class, len(msgs))
	contents := map[string]map[string]bool{} // valid orderId -> contents sent
	for _, m := range msgs {
		c := orderstream.Classify(m)
		classes[m] = c
		if !c.Valid {
			continue
		}
		if contents[c.OrderID] == nil {
			contents[c.OrderID] = map[string]bool{}
		}
		contents[c.OrderID][c.Content] = true
	}
	r.DistinctValidOrders = len(contents)

	storedHash := map[string]string{}
	for _, o := range stored {
		if _, dup := storedHash[o.OrderID]; dup {
			r.problem(checkOrders, "orderId %s is stored twice", o.OrderID)
		}
		storedHash[o.OrderID] = o.RequestHash
		switch {
		case contents[o.OrderID] == nil:
			r.problem(checkOrders, "orderId %s is stored but no valid message carried it", o.OrderID)
		case !contents[o.OrderID][o.RequestHash]:
			r.problem(checkOrders, "orderId %s is stored with requestHash %s, the fingerprint of no message sent", o.OrderID, o.RequestHash)
		}
	}
	r.StoredOrders = len(storedHash)
	for id := range contents {
		if _, ok := storedHash[id]; !ok {
			r.problem(checkOrders, "orderId %s was sent valid but is not stored", id)
		}
	}

	processed := map[*hostemu.Message]bool{}
	for _, inv := range invs {
		r.Invocations++
		for i, d := range inv.Deliveries {
			if d.DeliveryCount > 1 {
				r.Redeliveries++
			}
			if inv.Settlements[i] == hostemu.CompletionLost {
				r.LostCompletions++
			}
		}
		if !inv.OK() {
			r.FailedInvocations++
			if inv.Protocol {
				r.ProtocolErrors++
			}
			continue
		}
		for _, d := range inv.Deliveries {
			processed[d.Message] = true
		}
		r.checkInvocation(inv, classes, storedHash)
	}
	for _, m := range msgs {
		c := classes[m]
		if c.Valid && !processed[m] && storedHash[c.OrderID] != c.Content {
			r.problem(checkMismatches, "message %d (orderId %s) with content other than the stored one was never processed, so never parked", m.SequenceNumber, c.OrderID)
		}
	}
	r.DeadLetters = len(dls)
	r.CreatedOrders = len(stored)
	r.DuplicatesAbsorbed = r.storedContentDeliveries - r.StoredOrders
}

// checkInvocation matches the parking envelopes of one successful invocation
// to its deliveries by content.
func (r *Report) checkInvocation(inv *hostemu.Invocation, classes map[*hostemu.Message]orderstream.Class, storedHash map[string]string) {
	deliveries := map[string]int{} // content -> deliveries in this invocation
	class := map[string]orderstream.Class{}
	for _, d := range inv.Deliveries {
		c := classes[d.Message]
		deliveries[c.Content]++
		class[c.Content] = c
	}
	parked := map[string]map[string]int{} // content -> reason -> envelopes
	for _, o := range inv.Outputs {
		if o.Entity != r.ParkingQueue || o.ContentType == "" {
			continue
		}
		env, err := parseEnvelope(o.Text)
		if err != nil {
			r.problem(checkMismatches, "%s invocation %s parked a message that is not an envelope: %v", inv.Function, inv.ID, err)
			continue
		}
		key := orderstream.ContentKey(env.body)
		if deliveries[key] == 0 {
			r.problem(checkMismatches, "%s invocation %s parked (%s) a body it was not given: %.80s", inv.Function, inv.ID, env.Reason, env.body)
			continue
		}
		if class[key].OtherType {
			continue // another message type: not this check's business
		}
		if parked[key] == nil {
			parked[key] = map[string]int{}
		}
		parked[key][env.Reason]++
		switch env.Reason {
		case reasonHashMismatch:
			r.MismatchesParked++
		case reasonValidation, reasonMalformed:
			r.InvalidParked++
		case reasonExhausted:
			r.ExhaustedParked++
		default:
			r.problem(checkMismatches, "%s invocation %s parked with reason %q, which docs/contract.md §6 does not know", inv.Function, inv.ID, env.Reason)
		}
	}
	for key, n := range deliveries {
		c := class[key]
		p := parked[key]
		switch {
		case c.OtherType:
			r.OtherTypeDeliveries += n
		case !c.Valid:
			r.InvalidDeliveries += n
			if got := p[reasonValidation] + p[reasonMalformed]; got != n || p[reasonHashMismatch]+p[reasonExhausted] > 0 {
				r.problem(checkInvalid, "invalid message %q: %d successful deliveries in invocation %s, %d parked as invalid (%v)", c.OrderID, n, inv.ID, got, p)
			}
		case storedHash[c.OrderID] == "":
			// Not stored at all: reported by the orderId check.
		case storedHash[c.OrderID] == key:
			r.storedContentDeliveries += n
			if p[reasonHashMismatch]+p[reasonValidation]+p[reasonMalformed] > 0 {
				r.problem(checkMismatches, "orderId %s: a delivery of the stored content was parked (%v) in invocation %s", c.OrderID, p, inv.ID)
			}
		default:
			r.MismatchDeliveries += n
			if p[reasonHashMismatch] != n || len(p) != 1 {
				r.problem(checkMismatches, "orderId %s: %d successful deliveries of a content other than the stored one in invocation %s, parked %v; want %d HashMismatch",
					c.OrderID, n, inv.ID, p, n)
			}
		}
	}
}

type envelope struct {
	Reason       string `json:"reason"`
	OrderID      string `json:"orderId"`
	Body         string `json:"body"`
	BodyEncoding string `json:"bodyEncoding"`
	body         []byte
}

func parseEnvelope(text string) (*envelope, error) {
	var e envelope
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		return nil, fmt.Errorf("%v: %.80s", err, text)
	}
	e.body = []byte(e.Body)
	if e.BodyEncoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			return nil, fmt.Errorf("body is not base64: %v", err)
		}
		e.body = b
	}
	return &e, nil
}

// checkKind names the three claims of the check.
type checkKind int

const (
	checkOrders     checkKind = iota // orders in Cosmos DB = distinct valid orderIds
	checkMismatches                  // every other content parked as HashMismatch
	checkInvalid                     // every invalid message parked as such
)

func (r *Report) problem(kind checkKind, format string, args ...any) {
	r.failed[kind]++
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}
