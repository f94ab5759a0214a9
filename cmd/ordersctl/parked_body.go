package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ordersink/orders-consumer/orders"
)

// parkedBodies reads and deletes bodies kept in Cosmos DB (contract §6),
// opening the store on first use.
type parkedBodies struct {
	getenv func(string) string
	store  parkedBodyStore
	err    error
}

// parkedBodyStore is what reading and deleting a parked body needs of the
// store; *cosmos.Store has it.
type parkedBodyStore interface {
	PartitionDocuments(ctx context.Context, orderID string) ([]json.RawMessage, error)
	ParkedBodyVersions(ctx context.Context, partitionKey, digest string) (map[string]string, error)
	DeleteParkedBody(ctx context.Context, partitionKey string, versions map[string]string) (deleted, kept int, err error)
}

// openBodyStore opens the store parked bodies are kept in; tests replace it.
var openBodyStore = func(getenv func(string) string) (parkedBodyStore, error) {
	s, err := openStore(getenv)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return s, nil
}

// open opens the store once; its error is why bodies cannot be reached.
func (b *parkedBodies) open() error {
	if b.store == nil && b.err == nil {
		store, err := openBodyStore(b.getenv)
		if err != nil {
			b.err = err
		} else {
			b.store = store
		}
	}
	return b.err
}

func (b *parkedBodies) read(ctx context.Context, p Parked) ([]byte, error) {
	if err := b.open(); err != nil {
		return nil, fmt.Errorf("the body is kept in Cosmos DB (%s): %w", p.BodyRef.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	docs, err := b.store.PartitionDocuments(ctx, p.BodyRef.PartitionKey)
	if err != nil {
		return nil, fmt.Errorf("read the parked body %s: %w", p.BodyRef.ID, err)
	}
	return orders.JoinParkedBody(docs, p.BodySHA256)
}

// bodyKey names a parked body: its partition and digest.
type bodyKey struct{ partitionKey, digest string }

// bodyVersions reads, before the settle, the documents of the body of each
// step about to be settled that has one: the delete after the settle
// removes only documents unchanged since, so a body parked again meanwhile
// (a resubmitted message refused again) stays for its new envelope. A step
// whose body cannot be read is skipped and taken out of chosen: settled, it
// could leave its body for ever.
func (ch *change) bodyVersions(ctx context.Context, steps []step, chosen map[int64]bool) map[bodyKey]map[string]string {
	versions := map[bodyKey]map[string]string{}
	failed := map[bodyKey]error{}
	for i := range steps {
		s := &steps[i]
		if s.act == nil || s.parked.BodyRef == nil {
			continue
		}
		k := bodyKey{s.parked.BodyRef.PartitionKey, s.parked.BodySHA256}
		_, read := versions[k]
		if _, seen := failed[k]; !read && !seen {
			readCtx, cancel := context.WithTimeout(ctx, opTimeout)
			v, err := ch.bodies.store.ParkedBodyVersions(readCtx, k.partitionKey, k.digest)
			cancel()
			if err != nil {
				failed[k] = err
			} else {
				versions[k] = v
			}
		}
		if err := failed[k]; err != nil {
			s.act, s.out.Action = nil, "skipped"
			s.out.Detail = fmt.Sprintf("its body is kept in Cosmos DB (%s), which must be deleted with it, and could not be read: %v", s.parked.BodyRef.ID, err)
			delete(chosen, s.parked.SequenceNumber)
		}
	}
	return versions
}

// Outcomes of a body whose envelope was settled for good that need nothing
// more of the operator.
const (
	bodyDeleted     = "deleted"
	bodyGone        = "already gone"
	bodyPointedAt   = "kept: another parked message points at it"
	bodyParkedAgain = "kept: parked again while its envelope was settled; the new envelope points at it"
)

// deleteBodies deletes the bodies kept in Cosmos DB of the messages steps
// settled for good, once no message still listed points at the same body
// (bodies are content-addressed: a body parked twice is one document), and
// says in each step's out.Body what became of it. Only after the settle:
// a body deleted first would leave an envelope pointing at nothing if the
// complete failed. A failure is reported, never undoes the settle. The
// listing is taken afresh, after the settle; a body parked again after
// versions were read is kept, whenever its envelope arrives.
func (ch *change) deleteBodies(ctx context.Context, c *cli, q queues, steps []step, versions map[bodyKey]map[string]string) {
	var settled []*step
	for i := range steps {
		if s := &steps[i]; s.parked.BodyRef != nil && (s.out.Action == "completed" || s.out.Action == "resubmitted") {
			settled = append(settled, s)
		}
	}
	if len(settled) == 0 {
		return
	}
	// The settle is done: an interrupt must not leave its bodies behind.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	still := map[bodyKey]bool{}
	remaining, err := q.List(ctx)
	switch {
	case ch.bodies.open() != nil: // apply skipped these; a guard all the same
		err = fmt.Errorf("kept: %w", ch.bodies.open())
	case err != nil:
		err = fmt.Errorf("kept: the queues could not be listed again to see whether another message points at it: %w", err)
	case len(q.Cut()) > 0:
		err = fmt.Errorf("kept: the %v queue holds more than %d messages, so whether another points at it is unknown", q.Cut(), maxPeek)
	}
	for _, p := range remaining {
		if p.BodyRef != nil {
			still[bodyKey{p.BodyRef.PartitionKey, p.BodySHA256}] = true
		}
	}
	done := map[bodyKey]string{}
	for _, s := range settled {
		k := bodyKey{s.parked.BodyRef.PartitionKey, s.parked.BodySHA256}
		switch outcome, seen := done[k]; {
		case seen:
			s.out.Body = outcome
		case err != nil:
			s.out.Body = err.Error()
		case still[k]:
			s.out.Body = bodyPointedAt
		default:
			switch n, kept, derr := ch.bodies.store.DeleteParkedBody(ctx, k.partitionKey, versions[k]); {
			case derr != nil:
				s.out.Body = fmt.Sprintf("not deleted: %v", derr)
			case kept > 0:
				s.out.Body = bodyParkedAgain
			case n == 0:
				s.out.Body = bodyGone
			default:
				s.out.Body = bodyDeleted
			}
		}
		done[k] = s.out.Body
		if !slices.Contains([]string{bodyDeleted, bodyGone, bodyPointedAt, bodyParkedAgain}, s.out.Body) {
			fmt.Fprintf(c.stderr, "warning: %s #%d was settled, but its body stays (%s); parked bodies never expire: once no message points at it, delete the documents of type parkedBody with bodySha256 %s in partition %s (Data Explorer)\n",
				s.parked.Queue, s.parked.SequenceNumber, s.out.Body, k.digest, k.partitionKey)
		}
	}
}
