package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ordersink/orders-consumer/orders"
)

// Store keeps orders in one container whose partition key path is /orderId.
// Pattern: Standard package layout (docs/design-patterns.md#standard-package-layout).
type Store struct {
	database, containerID string
	dial                  func() (*azcosmos.Client, error)
	conn                  atomic.Pointer[conn]
	recovery              recovery
	// loopback: the endpoint is a local emulator (CheckEndpoint allows
	// http:// only for loopback hosts).
	loopback bool
}

// Open connects to the account and returns a Store over database/container.
// It does no I/O: the first request reads the account's regions.
func Open(o Options, database, container string) (*Store, error) {
	dial, err := newDialer(o)
	if err != nil {
		return nil, err
	}
	s := &Store{database: database, containerID: container, dial: dial, loopback: strings.HasPrefix(strings.ToLower(o.Endpoint), "http://")}
	c, err := s.connect()
	if err != nil {
		return nil, err
	}
	s.conn.Store(c)
	return s, nil
}

// noContent asks Cosmos not to echo the written document: nothing reads it,
// and it saves bandwidth and parsing on every write.
var noContent = &azcosmos.ItemOptions{EnableContentResponseOnWrite: false}

// CreateOrder creates the order document (id = partition key = orderId) and
// its outbox event in one transactional batch: one round trip for a new
// order. When the order exists the batch fails on its first operation and
// writes nothing; Cosmos returns no body on conflict, so the stored
// fingerprint costs one point read.
// Pattern: Create as claim (docs/design-patterns.md#create-as-claim).
func (s *Store) CreateOrder(ctx context.Context, b *orders.AcceptanceBatch) (*orders.StoredFingerprint, error) {
	exists, err := s.batchCreate(ctx, "create order", b.OrderID, b.Documents)
	if err != nil || !exists {
		return nil, err
	}
	return s.readFingerprint(ctx, b.OrderID)
}

// ReadOrder returns the stored order document of orderID, nil when there is
// none: GetOrder's only request (orders.OrderReader), one point read (id =
// partition key = orderId) when the order is there.
//
// An order Cosmos DB answers 404 for is read again after each of
// lagPauses: it may have been written a moment ago through another
// instance, whose client's session this one does not share, and a read
// served by a replica a write behind answers 404
// (docs/adr/0016-reads-behind-a-write.md). The local emulator's 500 for a
// missing item is not: it has one replica.
func (s *Store) ReadOrder(ctx context.Context, orderID string) (json.RawMessage, error) {
	var doc json.RawMessage
	for i := 0; ; i++ {
		var err error
		status := 0
		doc, err = pointRead(s.loopback, func() (azcosmos.ItemResponse, error) {
			resp, err := call(ctx, s, func(c *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
				return c.ReadItem(ctx, azcosmos.NewPartitionKeyString(orderID), orderID, nil)
			})
			status = statusOf(err)
			return resp, err
		}, func() ([]json.RawMessage, error) {
			return s.query(ctx, "SELECT * FROM c WHERE c.orderId = @o AND c.id = @o", azcosmos.NewPartitionKeyString(orderID),
				&azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@o", Value: orderID}}})
		})
		if err == nil && status == http.StatusNotFound && i < len(lagPauses) {
			err = pause(ctx, lagPauses[i])
			if err == nil {
				continue
			}
		}
		if err != nil {
			return nil, classify("read order", orderID, err)
		}
		return doc, nil
	}
}

// lagPauses are the waits before reading again a document found missing
// right after it may have been written (a create's 409, a GET after another
// instance's 201): a replica a write behind catches up within milliseconds
// in Azure; 420 ms in all.
var lagPauses = []time.Duration{20 * time.Millisecond, 80 * time.Millisecond, 320 * time.Millisecond}

// pause waits d unless ctx ends first.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// pointRead returns the document read, nil when there is none (404). The
// local emulator answers a read of a missing item with 500
// (docs/cosmos-emulators.md): on a loopback endpoint only, such a 500 is
// asked again with query, which it answers truthfully.
func pointRead(loopback bool, read func() (azcosmos.ItemResponse, error), query func() ([]json.RawMessage, error)) (json.RawMessage, error) {
	resp, err := read()
	switch status := statusOf(err); {
	case err == nil:
		return resp.Value, nil
	case status == http.StatusNotFound:
		return nil, nil
	case status == http.StatusInternalServerError && loopback:
		docs, qerr := query()
		if qerr != nil || len(docs) == 0 {
			return nil, qerr
		}
		return docs[0], nil
	}
	return nil, err
}

func (s *Store) readFingerprint(ctx context.Context, orderID string) (*orders.StoredFingerprint, error) {
	var (
		resp azcosmos.ItemResponse
		err  error
	)
	// A 404 right after a 409 is a read served by a replica that has not seen
	// the write yet (reads without a session token are not read-your-writes).
	// It is worth a few quick retries before giving the message back to the
	// broker.
	for i := 0; ; i++ {
		resp, err = call(ctx, s, func(c *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
			return c.ReadItem(ctx, azcosmos.NewPartitionKeyString(orderID), orderID, nil)
		})
		if err == nil || statusOf(err) != http.StatusNotFound || i == len(lagPauses) {
			break
		}
		if perr := pause(ctx, lagPauses[i]); perr != nil {
			return nil, classify("read order", orderID, perr)
		}
	}
	if err != nil {
		return nil, classify("read order", orderID, err)
	}
	fp, err := orders.ParseStoredFingerprint(resp.Value)
	if err != nil {
		return nil, &orders.StoreError{Op: "read order", OrderID: orderID, Status: http.StatusOK, Err: err}
	}
	return fp, nil
}

// RecordConflict creates the conflict record; one that exists already is fine.
func (s *Store) RecordConflict(ctx context.Context, c orders.Conflict) error {
	doc, err := c.Document()
	if err != nil {
		return &orders.StoreError{Op: "record conflict", OrderID: c.OrderID, Err: err}
	}
	_, err = call(ctx, s, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
		return cc.CreateItem(ctx, azcosmos.NewPartitionKeyString(c.OrderID), doc, noContent)
	})
	if err == nil || statusOf(err) == http.StatusConflict {
		return nil
	}
	return classify("record conflict", c.OrderID, err)
}

// classify wraps a Cosmos error as an orders.StoreError that says whether a
// later delivery may succeed.
func classify(op, orderID string, err error) error {
	f := failureOf(err)
	return &orders.StoreError{Op: op, OrderID: orderID, Status: f.status, SubStatus: f.subStatus, IsTransient: f.transient, Err: f.err}
}

// failure is the one reading of a Cosmos error, whichever store's error
// carries it (classify, classifyKey): what Cosmos answered (status 0 when
// nothing answered), whether a later attempt may succeed, and the error
// in one line.
type failure struct {
	status, subStatus int
	transient         bool
	err               error
}

func failureOf(err error) failure {
	status := statusOf(err)
	return failure{status: status, subStatus: subStatusOf(err), transient: isTransient(status), err: concise(err)}
}

// conciseError keeps the SDK's error for errors.As while its text stays on
// one line: the SDK's own text spans a dozen lines with the request URL and
// the whole response body, too much for a log field or a parking envelope.
type conciseError struct {
	msg string
	err error
}

func (e *conciseError) Error() string { return e.msg }
func (e *conciseError) Unwrap() error { return e.err }

// concise describes a Cosmos error as "429 Too Many Requests: TooManyRequests:
// Request rate is large… (activity …)".
func concise(err error) error {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return err
	}
	msg := fmt.Sprintf("%d %s", re.StatusCode, http.StatusText(re.StatusCode))
	if re.RawResponse == nil {
		return &conciseError{msg: msg, err: err}
	}
	if body, perr := runtime.Payload(re.RawResponse); perr == nil {
		var e struct{ Code, Message string }
		if json.Unmarshal(body, &e) == nil && (e.Code != "" || e.Message != "") {
			first, _, _ := strings.Cut(strings.TrimPrefix(e.Message, "Message: "), "\n")
			msg += ": " + strings.Trim(e.Code+": "+strings.TrimSpace(first), ": ")
		}
	}
	if id := re.RawResponse.Header.Get("x-ms-activity-id"); id != "" {
		msg += " (activity " + id + ")"
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return &conciseError{msg: msg, err: err}
}

// isTransient: throttling, timeouts, outages and lost connections may pass;
// a request Cosmos refuses as such (400, 413) will be refused again.
// Authorization failures (401, 403) are retried: they are configuration
// problems an operator fixes without the message being lost.
func isTransient(status int) bool {
	// Without an HTTP answer (status 0: refused or reset connection, timeout,
	// DNS failure) nothing is known about the write, so it is always retried.
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return false
	}
	return true
}

// ParkBody keeps the body of a parked message whose envelope cannot carry it
// (docs/contract.md §6), in one document or, when it is too large for one, in parts.
// Ids derive from the body's digest, so parking a body again (a
// redelivery, a resubmitted message parked again) writes the same
// documents. It writes every one of them, each time: a part missing after
// a failure is written again, and ordersctl, which deletes a body only if
// none of its documents changed since it looked (DeleteParkedBody), keeps a
// body parked again while it settled the envelope that pointed at it.
func (s *Store) ParkBody(ctx context.Context, p orders.ParkedBody) error {
	docs, err := p.Documents()
	if err != nil {
		return &orders.StoreError{Op: "park body", OrderID: p.PartitionKey, Err: err}
	}
	pk := azcosmos.NewPartitionKeyString(p.PartitionKey)
	for _, doc := range docs {
		_, err = call(ctx, s, func(cc *azcosmos.ContainerClient) (azcosmos.ItemResponse, error) {
			return cc.UpsertItem(ctx, pk, doc, noContent)
		})
		if err != nil {
			return classify("park body", p.PartitionKey, err)
		}
	}
	return nil
}
