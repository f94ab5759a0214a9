package hostemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Lease is one lease document of the change feed processor, in the shape of
// the Cosmos DB SDK's DocumentServiceLeaseCore (Microsoft.Azure.Cosmos,
// ChangeFeedProcessor/LeaseManagement): one per partition key range, owned
// by one host instance, holding the range's checkpoint. Its id is
// <leaseContainerPrefix><account host>_<database rid>_<container rid>..<range id>.
type Lease struct {
	ID         string         `json:"id"`
	Version    int            `json:"version"` // 0: partition key range based
	LeaseToken string         `json:"LeaseToken"`
	FeedRange  *leaseRange    `json:"FeedRange,omitempty"`
	Owner      string         `json:"Owner"`
	Mode       string         `json:"Mode"`
	Properties map[string]any `json:"properties"`
	Timestamp  string         `json:"timestamp"`
	// ContinuationToken is where the range's feed resumes. Real Cosmos DB
	// puts the LSN's etag here; the emulation writes its own position
	// (FeedPosition as JSON), which only it reads.
	ContinuationToken string `json:"ContinuationToken"`
	ETag              string `json:"_etag,omitempty"`
}

type leaseRange struct {
	Range struct {
		Min string `json:"min"`
		Max string `json:"max"`
	} `json:"Range"`
}

// FeedPosition is the emulation's checkpoint in a range's feed: every change
// before second TS was delivered, and of the changes in second TS those
// whose _etag is in Seen (an _etag names one version of one document).
type FeedPosition struct {
	TS   int64    `json:"ts"`
	Seen []string `json:"seen,omitempty"`
}

// Position decodes the lease's checkpoint; an empty token is the feed's
// beginning.
func (l *Lease) Position() (FeedPosition, error) {
	var p FeedPosition
	if l.ContinuationToken == "" {
		return p, nil
	}
	if err := json.Unmarshal([]byte(l.ContinuationToken), &p); err != nil {
		return p, fmt.Errorf("lease %s: continuation token %q is not the emulation's: %w", l.ID, l.ContinuationToken, err)
	}
	return p, nil
}

// leaseStore reads and writes the lease documents of one trigger; the lease
// container is partitioned on /id, as the extension requires.
type leaseStore struct {
	c      *azcosmos.ContainerClient
	prefix string // up to and including ".."
	owner  string
}

// ensure creates the range's lease, without an owner, when it is missing,
// with start as its checkpoint (the beginning, or now when
// startFromBeginning is false: the CFP starts a new lease there).
func (s *leaseStore) ensure(ctx context.Context, rangeID string, start FeedPosition) error {
	id := s.prefix + rangeID
	if _, err := s.read(ctx, id); !errors.Is(err, errLeaseNotFound) {
		return err
	}
	l := &Lease{ID: id, LeaseToken: rangeID, Mode: "IncrementalFeed", Properties: map[string]any{}, FeedRange: &leaseRange{}}
	if start.TS != 0 || len(start.Seen) > 0 {
		tok, _ := json.Marshal(start)
		l.ContinuationToken = string(tok)
	}
	l.Timestamp = time.Now().UTC().Format(time.RFC3339Nano)
	body, _ := json.Marshal(l)
	if _, err := s.c.CreateItem(ctx, azcosmos.NewPartitionKeyString(id), body, nil); err != nil && statusCode(err) != http.StatusConflict {
		return fmt.Errorf("create lease %s: %w", id, err)
	}
	return nil
}

// take makes l this instance's if its owner is still the one l names, as
// the SDK's DocumentServiceLeaseManagerCosmos.AcquireAsync does.
func (s *leaseStore) take(ctx context.Context, l *Lease) (*Lease, error) {
	// The owner it was listed with, as the processor's AcquireAsync keeps it:
	// a renewal meanwhile (a 412, then a read) leaves the steal valid, a new
	// owner does not. l itself is written into on the first try.
	return s.update(ctx, l, l.Owner, func(l *Lease) { l.Owner = s.owner })
}

// list returns the trigger's leases (the lease container is small).
func (s *leaseStore) list(ctx context.Context) ([]*Lease, error) {
	var out []*Lease
	pager := s.c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKey(), nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list leases: %w", err)
		}
		for _, it := range page.Items {
			var l Lease
			if json.Unmarshal(it, &l) == nil && strings.HasPrefix(l.ID, s.prefix) {
				out = append(out, &l)
			}
		}
	}
	slices.SortFunc(out, func(a, b *Lease) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// checkpoint stores pos as the lease's continuation, if this host instance
// still owns the lease (the SDK's DocumentServiceLeaseCheckpointerCore).
func (s *leaseStore) checkpoint(ctx context.Context, l *Lease, pos FeedPosition) (*Lease, error) {
	tok, err := json.Marshal(pos)
	if err != nil {
		return nil, err
	}
	return s.update(ctx, l, s.owner, func(l *Lease) { l.ContinuationToken = string(tok) })
}

// update applies change to the lease, if owner still holds it
// (errLeaseLost otherwise), and replaces it with If-Match on its etag; on
// 412 it reads the lease again and reapplies change, as
// DocumentServiceLeaseUpdaterCosmos does (a bounded number of times).
func (s *leaseStore) update(ctx context.Context, l *Lease, owner string, change func(*Lease)) (*Lease, error) {
	for range 5 {
		if l.Owner != owner {
			return nil, fmt.Errorf("lease %s: %w to %q", l.ID, errLeaseLost, l.Owner)
		}
		change(l)
		l.Timestamp = time.Now().UTC().Format(time.RFC3339Nano)
		etag := azcore.ETag(l.ETag)
		body, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		_, err = s.c.ReplaceItem(ctx, azcosmos.NewPartitionKeyString(l.ID), l.ID, body, &azcosmos.ItemOptions{IfMatchEtag: &etag})
		if err == nil {
			return s.read(ctx, l.ID)
		}
		if statusCode(err) != http.StatusPreconditionFailed {
			return nil, fmt.Errorf("update lease %s: %w", l.ID, err)
		}
		if l, err = s.read(ctx, l.ID); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("update lease %s: still 412 after 5 reads", l.ID)
}

// read returns the lease document, or nil and a not-found error. It queries
// rather than reading the item: the local emulator answers a read of a
// missing item with 500 (docs/cosmos-emulators.md).
func (s *leaseStore) read(ctx context.Context, id string) (*Lease, error) {
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@id", Value: id}}}
	pager := s.c.NewQueryItemsPager("SELECT * FROM c WHERE c.id = @id", azcosmos.NewPartitionKeyString(id), opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("read lease %s: %w", id, err)
		}
		for _, it := range page.Items {
			var l Lease
			if err := json.Unmarshal(it, &l); err != nil {
				return nil, fmt.Errorf("lease %s: %w", id, err)
			}
			return &l, nil
		}
	}
	return nil, errLeaseNotFound
}

var errLeaseNotFound = errors.New("lease not found")
