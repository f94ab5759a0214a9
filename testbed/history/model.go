// Package history checks what clients saw during a run for
// linearizability (github.com/anishathalye/porcupine): every HTTP answer,
// every queue delivery's outcome and every event published must fit one
// sequential order of the contract's operations, each taking effect between
// its call and its return. The model (docs/contract.md §5, §10, §13) is per
// orderId: the order (owner, fingerprint, creator, public view) and the
// Idempotency-Keys used on it with their first answer. An operation whose
// answer was lost, or that says nothing of what happened (a 5xx, 409 request-in-progress),
// may have taken any of its effects, or none, at any time after its call.
package history

import (
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Kind is what an operation did.
type Kind uint8

// The operations.
const (
	// Submit is POST /api/orders: Client, Key, Hash (the payload's
	// fingerprint).
	Submit Kind = iota + 1
	// Get is GET /api/orders/{orderId} as Client.
	Get
	// Deliver is one queue delivery to ProcessOrder of an order with Hash.
	Deliver
	// Publish is an OrderAccepted event with Hash sent to the topic.
	Publish
)

func (k Kind) String() string {
	return [...]string{"?", "POST", "GET", "deliver", "publish"}[min(int(k), 4)]
}

// Input is an operation as called.
type Input struct {
	Kind    Kind
	OrderID string
	Client  string
	Key     string
	Hash    string
	// Label names the operation in the visualisation (a message id, an
	// instance, an attempt).
	Label string
}

// Output is what the caller was told. Unknown: no answer, or one that
// says nothing of what happened (5xx, 409 request-in-progress, a failed delivery).
type Output struct {
	Unknown bool
	Status  int
	// Outcome: a Deliver's contract §5 outcome (created, duplicate,
	// mismatch, …); a Submit's problem type anchor (order-id-taken, …), or
	// Receipt for a 200 that carries an order's receipt.
	Outcome  string
	Body     string // a digest of the answer's body
	Replayed bool
}

// Outcomes and problem types the model knows.
const (
	OrderIDTaken = "order-id-taken"
	KeyReused    = "idempotency-key-reused"
	Created      = "created"
	Duplicate    = "duplicate"
	Mismatch     = "mismatch"
	// Receipt: the 200 to a client that sent the content of an order it
	// does not own (contract §13).
	Receipt = "receipt"
	// The refusals of the rules, the key's stored answer.
	InvalidOrder   = "invalid-order"
	MalformedOrder = "malformed-order"
)

// unbound is a body not seen yet: an answer that was lost. The first
// answer that shows it binds it.
const unbound = "?"

// order is one orderId's order document as the model knows it.
type order struct {
	exists bool
	owner  string // "" for a queue order
	hash   string
	by     string // the key that created it ("client key"), "" for the queue
	view   string // the public view's digest, or unbound
}

// key is one Idempotency-Key's record: claimed (by Hash) and, once done,
// its first answer.
type key struct {
	id, hash string
	done     bool
	status   int
	body     string
}

// state is one orderId's state. Values are never changed in place.
type state struct {
	order order
	keys  []key // sorted by id
}

func equal(a, b any) bool {
	x, y := a.(state), b.(state)
	return x.order == y.order && slices.Equal(x.keys, y.keys)
}

func keyID(in Input) string { return in.Client + " " + in.Key }

func (s state) key(id string) (key, bool) {
	i, ok := slices.BinarySearchFunc(s.keys, id, func(k key, id string) int { return strings.Compare(k.id, id) })
	if !ok {
		return key{id: id}, false
	}
	return s.keys[i], true
}

func (s state) withKey(k key) state {
	i, ok := slices.BinarySearchFunc(s.keys, k.id, func(k key, id string) int { return strings.Compare(k.id, id) })
	keys := slices.Clone(s.keys)
	if ok {
		keys[i] = k
	} else {
		keys = slices.Insert(keys, i, k)
	}
	return state{order: s.order, keys: keys}
}

func (s state) withoutKey(id string) state {
	keys := slices.DeleteFunc(slices.Clone(s.keys), func(k key) bool { return k.id == id })
	return state{order: s.order, keys: keys}
}

// bind matches a seen body against a known one, binding an unbound one;
// an unbound seen one (an answer lost) matches any.
func bind(known *string, seen string) bool {
	switch {
	case seen == unbound:
		return true
	case *known == unbound:
		*known = seen
		return true
	}
	return *known == seen
}

func step(st, in, out any) []any {
	s, i, o := st.(state), in.(Input), out.(Output)
	var next []state
	switch i.Kind {
	case Submit:
		next = s.submit(i, o)
	case Get:
		next = s.get(i, o)
	case Deliver:
		next = s.deliver(i, o)
	case Publish:
		if s.order.exists && s.order.hash == i.Hash {
			next = []state{s}
		}
	}
	res := make([]any, len(next))
	for n, x := range next {
		res[n] = x
	}
	return res
}

// submit: a fresh final answer is the key's one execution, a replay its
// first answer byte for byte, 422 a key claimed with another payload.
func (s state) submit(in Input, out Output) []state {
	k, claimed := s.key(keyID(in))
	switch {
	case out.Unknown:
		return s.anySubmit(in)
	case out.Status == 422 && out.Outcome == KeyReused:
		if claimed && k.hash != in.Hash {
			return []state{s}
		}
		return nil
	case out.Replayed:
		o := s.order
		if !k.done || k.hash != in.Hash || k.status != out.Status || !bind(&k.body, out.Body) ||
			out.Status/100 == 2 && out.Outcome != Receipt && !bind(&o.view, out.Body) { // a 2xx body is the order's view
			return nil
		}
		return []state{state{order: o, keys: s.keys}.withKey(k)}
	case out.Status == 201 || out.Status == 200 || out.Status == 409 && out.Outcome == OrderIDTaken ||
		out.Outcome == InvalidOrder || out.Outcome == MalformedOrder:
		if claimed && (k.done || k.hash != in.Hash) {
			return nil
		}
		n, ok := s.decide(in, out.Status, out.Outcome == Receipt, out.Body)
		if !ok {
			return nil
		}
		return []state{n.withKey(key{id: k.id, hash: in.Hash, done: true, status: out.Status, body: out.Body})}
	}
	return []state{s} // refused before any claim (400 about the key or body, 403, 411, 413)
}

// decide is the order's side of one execution answered status with body,
// by contract §13: 201 creates the order, or resumes the one the key's
// earlier attempt created; 200 is the caller's own order under a new key,
// or the receipt of this content stored by another owner; 409
// order-id-taken is other content; a refusal of the rules (400, 422) is
// never given for content the orderId holds.
func (s state) decide(in Input, status int, receipt bool, body string) (state, bool) {
	o := s.order
	same := o.exists && o.hash == in.Hash
	mine := same && o.owner == in.Client
	switch {
	case status == 201 && !o.exists:
		o = order{exists: true, owner: in.Client, hash: in.Hash, by: keyID(in), view: body}
	case status == 200 && receipt:
		if !same || mine {
			return s, false
		}
	case status == 201 && mine && o.by == keyID(in), status == 200 && mine && o.by != keyID(in):
		if !bind(&o.view, body) {
			return s, false
		}
	case status == 409 && o.exists && !same:
	case status == 400 || status == 422:
		if same {
			return s, false
		}
	default:
		return s, false
	}
	return state{order: o, keys: s.keys}, true
}

// anySubmit is every state a Submit without a known answer may have left:
// nothing, the key claimed (its attempt died), the order created with the
// key claimed or released, or a whole execution whose answer was lost.
func (s state) anySubmit(in Input) []state {
	k, claimed := s.key(keyID(in))
	if claimed && (k.done || k.hash != in.Hash) {
		return []state{s} // a replay, or refused as a reused key
	}
	started := key{id: k.id, hash: in.Hash}
	out := []state{s, s.withKey(started)}
	if !s.order.exists {
		made := state{order: order{exists: true, owner: in.Client, hash: in.Hash, by: k.id, view: unbound}, keys: s.keys}
		out = append(out, made.withKey(started), made.withoutKey(k.id))
	}
	for _, a := range []struct {
		status  int
		receipt bool
	}{{201, false}, {200, false}, {200, true}, {409, false}} {
		if n, ok := s.decide(in, a.status, a.receipt, unbound); ok {
			out = append(out, n.withKey(key{id: k.id, hash: in.Hash, done: true, status: a.status, body: unbound}))
		}
	}
	return out
}

// get: the owner reads its order's view, anyone else 404.
func (s state) get(in Input, out Output) []state {
	o := s.order
	switch {
	case out.Unknown:
	case out.Status == 200:
		if !o.exists || o.owner != in.Client || !bind(&o.view, out.Body) {
			return nil
		}
		return []state{{order: o, keys: s.keys}}
	case out.Status == 404:
		if o.exists && o.owner == in.Client {
			return nil
		}
	}
	return []state{s}
}

// deliver: created only for a new orderId, duplicate for the stored
// fingerprint, mismatch for another. A duplicate may also be the
// delivery's own create, whose answer was lost and whose retry met the
// document it wrote: the handler cannot tell that from a copy delivered at
// the same moment (orders.CauseConcurrent).
func (s state) deliver(in Input, out Output) []state {
	o := s.order
	created := state{order: order{exists: true, hash: in.Hash, view: unbound}, keys: s.keys}
	switch {
	case out.Unknown:
		if !o.exists {
			return []state{s, created}
		}
	case out.Outcome == Created, out.Outcome == Duplicate && !o.exists:
		if o.exists {
			return nil
		}
		return []state{created}
	case out.Outcome == Duplicate:
		if o.hash != in.Hash {
			return nil
		}
	case out.Outcome == Mismatch:
		if !o.exists || o.hash == in.Hash {
			return nil
		}
	}
	return []state{s}
}

// Model is the contract as porcupine checks it, one orderId at a time.
var Model = porcupine.NondeterministicModel{
	Init:  func() []any { return []any{state{}} },
	Step:  step,
	Equal: equal,
	DescribeOperation: func(in, out any) string {
		i, o := in.(Input), out.(Output)
		who := strings.TrimSpace(i.Client + " " + i.Key)
		answer := "unknown"
		if !o.Unknown {
			answer = strings.TrimSpace(fmt.Sprintf("%d %s %s", o.Status, o.Outcome, short(o.Body)))
			if o.Replayed {
				answer += " (replayed)"
			}
		}
		return fmt.Sprintf("%s %s %s [%s] -> %s", i.Kind, who, short(i.Hash), i.Label, answer)
	},
	DescribeState: func(st any) string {
		s := st.(state)
		desc := "no order"
		if o := s.order; o.exists {
			desc = fmt.Sprintf("order %s owner %q by %q view %s", short(o.hash), o.owner, o.by, short(o.view))
		}
		for _, k := range s.keys {
			desc += fmt.Sprintf("; key %q %s", k.id, short(k.hash))
			if k.done {
				desc += fmt.Sprintf(" answered %d %s", k.status, short(k.body))
			}
		}
		return desc
	},
}

// short cuts a digest for the visualisation.
func short(s string) string {
	s = strings.TrimPrefix(s, "sha256:")
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
