package hostemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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

// acquire returns the range's lease owned by this host instance, creating it
// when missing with start as its checkpoint (the beginning, or now when
// startFromBeginning is false: the CFP starts a new lease there).
func (s *leaseStore) acquire(ctx context.Context, rangeID string, min, max string, start FeedPosition) (*Lease, error) {
	id := s.prefix + rangeID
	l, err := s.read(ctx, id)
	if err != nil && !notFound(err) {
		return nil, err
	}
	if l == nil {
		l = &Lease{ID: id, LeaseToken: rangeID, Mode: "IncrementalFeed", Properties: map[string]any{}}
		l.FeedRange = &leaseRange{}
		l.FeedRange.Range.Min, l.FeedRange.Range.Max = min, max
		if start.TS != 0 || len(start.Seen) > 0 {
			tok, _ := json.Marshal(start)
			l.ContinuationToken = string(tok)
		}
		l.Owner, l.Timestamp = s.owner, time.Now().UTC().Format(time.RFC3339Nano)
		body, _ := json.Marshal(l)
		if _, err := s.c.CreateItem(ctx, azcosmos.NewPartitionKeyString(id), body, nil); err != nil && statusCode(err) != http.StatusConflict {
			return nil, fmt.Errorf("create lease %s: %w", id, err)
		}
		if l, err = s.read(ctx, id); err != nil {
			return nil, err
		}
	}
	return s.update(ctx, l, func(l *Lease) error { l.Owner = s.owner; return nil })
}

// checkpoint stores pos as the lease's continuation, if this host instance
// still owns the lease (the SDK's DocumentServiceLeaseCheckpointerCore).
func (s *leaseStore) checkpoint(ctx context.Context, l *Lease, pos FeedPosition) (*Lease, error) {
	tok, err := json.Marshal(pos)
	if err != nil {
		return nil, err
	}
	return s.update(ctx, l, func(server *Lease) error {
		if server.Owner != s.owner {
			return fmt.Errorf("lease %s was taken over by %q", l.ID, server.Owner)
		}
		server.ContinuationToken = string(tok)
		return nil
	})
}

// update replaces the lease with If-Match on its etag; on 412 it reads the
// lease again and reapplies change, as DocumentServiceLeaseUpdaterCosmos
// does (a bounded number of times).
func (s *leaseStore) update(ctx context.Context, l *Lease, change func(*Lease) error) (*Lease, error) {
	for range 5 {
		if err := change(l); err != nil {
			return nil, err
		}
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

func notFound(err error) bool { return errors.Is(err, errLeaseNotFound) }
