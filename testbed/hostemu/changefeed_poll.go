package hostemu

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// change is one document version read from the container.
type change struct {
	doc  []byte
	ts   int64  // _ts, seconds
	etag string // _etag: one version of one document
	seq  uint32 // creation number, from _rid
	pk   string // partition key, when the feed has ranges
}

// The feed is read with two queries per poll. Neither local emulator serves
// a change feed, and _ts is whole seconds, so both start at the
// checkpoint's second itself; the checkpoint's etags tell which of that
// second's versions were delivered. Nothing written in the same second as
// the checkpoint is missed, and a document changed again gets a new etag,
// so it comes again, as the latest-version feed gives it. headsQuery finds
// the next changes from their system properties alone (cheap when the
// reader lags behind); docsQuery then reads the documents of the seconds
// the batch spans. The emulator sorts by its _rid string, which is not
// creation order; poll sorts.
const (
	headsQuery = "SELECT c._ts, c._rid, c._etag FROM c WHERE c._ts >= @ts"
	docsQuery  = "SELECT * FROM c WHERE c._ts >= @ts AND c._ts <= @last"
)

// poll returns the next changes after pos in feed order, at most maxItems.
//
// Feed order here is (_ts, creation number): the vercel emulator numbers
// documents 1, 2, 3 … as it creates them (bytes 8-11 of _rid, little
// endian) and applies one request at a time, so within a second the
// creation number orders the creates of a partition as their writes were
// ordered, which is the order the real change feed (by LSN) gives. A
// replace keeps its document's number, so two changes in the same second
// where one is a replace may come in another order than their LSNs
// (docs/local-host.md "Change feed").
func (cf *ChangeFeed) poll(ctx context.Context, pos FeedPosition, rangeID string) ([]change, error) {
	seen := make(map[string]bool, len(pos.Seen))
	for _, e := range pos.Seen {
		seen[e] = true
	}
	var next []change
	err := cf.query(ctx, cf.heads(), []azcosmos.QueryParameter{{Name: "@ts", Value: pos.TS}}, func(_ []byte, c change) {
		if (c.ts > pos.TS || c.ts == pos.TS && !seen[c.etag]) && rangeOf(c.pk, cf.cfg.Ranges) == rangeID {
			next = append(next, c)
		}
	})
	if err != nil || len(next) == 0 {
		return nil, err
	}
	slices.SortStableFunc(next, func(a, b change) int {
		if a.ts != b.ts {
			return cmp.Compare(a.ts, b.ts)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	next = next[:min(len(next), cf.maxItems)]
	docs := map[string][]byte{}
	params := []azcosmos.QueryParameter{{Name: "@ts", Value: next[0].ts}, {Name: "@last", Value: next[len(next)-1].ts}}
	err = cf.query(ctx, docsQuery, params, func(doc []byte, c change) { docs[c.etag] = doc })
	if err != nil {
		return nil, err
	}
	for i := range next {
		doc, ok := docs[next[i].etag]
		if !ok {
			// Changed again between the two queries: its new version
			// comes later in the feed, so the batch ends before it.
			return next[:i], nil
		}
		next[i].doc = doc
	}
	return next, nil
}

// heads is headsQuery, with the partition key when the feed has ranges.
func (cf *ChangeFeed) heads() string {
	if cf.pkField == "" {
		return headsQuery
	}
	return strings.Replace(headsQuery, "c._etag", fmt.Sprintf("c._etag, c[%q] AS pk", cf.pkField), 1)
}

// query runs a cross-partition query on the monitored container and hands
// each item, compacted, with its system properties to f.
func (cf *ChangeFeed) query(ctx context.Context, q string, params []azcosmos.QueryParameter, f func([]byte, change)) error {
	pager := cf.cfg.Monitored.c.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{QueryParameters: params})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			var sys struct {
				TS   int64  `json:"_ts"`
				RID  string `json:"_rid"`
				ETag string `json:"_etag"`
				PK   string `json:"pk"`
			}
			if err := json.Unmarshal(it, &sys); err != nil {
				return fmt.Errorf("a document of %s is not an object: %w", cf.cfg.Monitored.ID(), err)
			}
			var doc bytes.Buffer
			if err := json.Compact(&doc, it); err != nil {
				return err
			}
			f(doc.Bytes(), change{ts: sys.TS, etag: sys.ETag, seq: creationNumber(sys.RID), pk: sys.PK})
		}
	}
	return nil
}

// after is the position past batch, which starts at or after p and is in
// feed order.
func (p FeedPosition) after(batch []change) FeedPosition {
	last := batch[len(batch)-1].ts
	next := FeedPosition{TS: last}
	if last == p.TS {
		next.Seen = slices.Clone(p.Seen)
	}
	for _, c := range batch {
		if c.ts == last {
			next.Seen = append(next.Seen, c.etag)
		}
	}
	return next
}

// creationNumber is the vercel emulator's document counter in a _rid (0
// when the _rid has another shape: changes of one second then keep the
// emulator's order).
func creationNumber(rid string) uint32 {
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(rid, "-", "/"))
	if err != nil || len(b) < 12 {
		return 0
	}
	return binary.LittleEndian.Uint32(b[8:12])
}

// Documents encodes the invocation of a cosmosDBTrigger function with docs
// (compact JSON documents as the container holds them): the extension binds
// the batch as compact JSON array text, which the host sends as a JSON
// string literal inside a string (three decodes), and Metadata holds only
// sys (handler/testdata/changefeed/README.md).
func (e *Encoder) Documents(fn *Function, docs [][]byte) []byte {
	data := newObject()
	data.set(fn.Trigger().Name, quote(quoteString(string(jsonArray(docs)))))
	md := newObject()
	md.set("sys", e.sys(fn.Name))
	return envelope(data, md)
}
