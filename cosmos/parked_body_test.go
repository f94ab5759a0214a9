package cosmos_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/orders"
)

// TestParkBodyKeepsTheExactBytes: a body is kept in one document, or in
// base64 parts when one document could not hold it; parking it again (a
// redelivery) is harmless; the parts put together are the body.
func TestParkBodyKeepsTheExactBytes(t *testing.T) {
	e := testEnv(t)
	for name, body := range map[string][]byte{
		"text":                   []byte(`{"orderId":"X","note":"` + strings.Repeat(`\"`, 1000) + `"}`),
		"not UTF-8":              []byte("{\xff\xfe}"),
		"larger than a document": bytes.Repeat([]byte("\x01abc"), 700<<10), // 2.8 MB
	} {
		t.Run(name, func(t *testing.T) {
			id := fmt.Sprintf("ORD-PARK-%d", time.Now().UnixNano())
			p := orders.NewParkedBody(body, id, id, orders.ValidationFailed, time.Now())
			for range 2 {
				if err := e.Store.ParkBody(context.Background(), p); err != nil {
					t.Fatal(err)
				}
			}
			if got := readParkedBody(t, id, p.SHA256); !bytes.Equal(got, body) {
				t.Fatalf("kept %d bytes, want the %d of the body", len(got), len(body))
			}
		})
	}
}

// readParkedBody puts a parked body together the way docs/runbook.md says.
func readParkedBody(t *testing.T, partitionKey, sha string) []byte {
	t.Helper()
	raws, err := testEnv(t).Store.PartitionDocuments(context.Background(), partitionKey)
	if err != nil {
		t.Fatal(err)
	}
	type part struct {
		Type, Body, BodyEncoding, BodySha256 string
		Part                                 int
	}
	var parts []part
	for _, raw := range raws {
		var p part
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		if p.Type == orders.TypeParkedBody && p.BodySha256 == sha {
			parts = append(parts, p)
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].Part < parts[j].Part })
	var out []byte
	for _, p := range parts {
		if p.BodyEncoding != "base64" {
			out = append(out, p.Body...)
			continue
		}
		b, err := base64.StdEncoding.DecodeString(p.Body)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

// TestDeleteParkedBody deletes every part of one parked body and nothing
// else of its partition: not the order, not another body parked beside it.
func TestDeleteParkedBody(t *testing.T) {
	e := testEnv(t)
	ctx := context.Background()
	id := fmt.Sprintf("ORD-PARKDEL-%d", time.Now().UnixNano())
	large := orders.NewParkedBody(bytes.Repeat([]byte("\x01abc"), 700<<10), id, id, orders.HashMismatch, time.Now())
	other := orders.NewParkedBody([]byte(`{"orderId":"`+id+`"}`), id, id, orders.HashMismatch, time.Now())
	for _, p := range []orders.ParkedBody{large, other} {
		if err := e.Store.ParkBody(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	versions := bodyVersions(t, id, large.SHA256)
	if len(versions) != 3 { // 2.8 MB in parts of 1 MB
		t.Fatalf("versions of %d documents, want the 3 parts", len(versions))
	}
	if n, kept, err := e.Store.DeleteParkedBody(ctx, id, versions); n != 3 || kept != 0 || err != nil {
		t.Errorf("deleted %d, kept %d, %v; want the 3 parts deleted", n, kept, err)
	}
	if got := readParkedBody(t, id, other.SHA256); string(got) != string(other.Body) {
		t.Errorf("the other body reads %q, want it kept", got)
	}
	raws, err := e.Store.PartitionDocuments(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(raws) != 1 {
		t.Errorf("partition holds %d documents, want only the other body", len(raws))
	}
	if n, kept, err := e.Store.DeleteParkedBody(ctx, id, versions); n != 0 || kept != 0 || err != nil {
		t.Errorf("deleting again: %d, %d, %v; want 0, 0 and no error", n, kept, err)
	}
}

// A body parked again after ordersctl read its versions (a resubmitted
// message parked again while its old envelope was being settled) is kept
// whole: the new envelope points at it.
func TestDeleteParkedBodyKeepsABodyParkedAgain(t *testing.T) {
	e := testEnv(t)
	ctx := context.Background()
	id := fmt.Sprintf("ORD-PARKAGAIN-%d", time.Now().UnixNano())
	large := orders.NewParkedBody(bytes.Repeat([]byte("\x02abc"), 700<<10), id, id, orders.HashMismatch, time.Now())
	if err := e.Store.ParkBody(ctx, large); err != nil {
		t.Fatal(err)
	}
	versions := bodyVersions(t, id, large.SHA256)
	if err := e.Store.ParkBody(ctx, large); err != nil { // parked again
		t.Fatal(err)
	}
	if n, kept, err := e.Store.DeleteParkedBody(ctx, id, versions); n != 0 || kept != 3 || err != nil {
		t.Errorf("deleted %d, kept %d, %v; want the 3 parts kept", n, kept, err)
	}
	if got := readParkedBody(t, id, large.SHA256); !bytes.Equal(got, large.Body) {
		t.Errorf("the body parked again reads %d bytes, want its %d", len(got), len(large.Body))
	}
}

func bodyVersions(t *testing.T, partitionKey, digest string) map[string]string {
	t.Helper()
	v, err := testEnv(t).Store.ParkedBodyVersions(context.Background(), partitionKey, digest)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestParkedBodyVersionsRefusesADocumentWithoutETag: a version without its
// _etag would send DeleteParkedBody's delete with an empty If-Match, which
// leaves its condition to the server; ParkedBodyVersions refuses it, and a
// document without its id. The emulators always send both, so the query's
// answer is a double's.
func TestParkedBodyVersionsRefusesADocumentWithoutETag(t *testing.T) {
	tr := cosmostest.NewTransport()
	store, err := testEnv(t).StoreVia(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, doc string
		refused   bool
	}{
		{"with its id and _etag", `{"id":"P-1:body","_etag":"\"0a00\""}`, false},
		{"without an _etag", `{"id":"P-1:body"}`, true},
		{"with an empty _etag", `{"id":"P-1:body","_etag":""}`, true},
		{"without an id", `{"_etag":"\"0a00\""}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr.Before(func(kind string, r *http.Request) *http.Response {
				if kind != "QUERY" {
					return nil
				}
				return cosmostest.Answer(r, http.StatusOK, `{"_rid":"faked","Documents":[`+tc.doc+`],"_count":1}`)
			})
			defer tr.Before(nil)
			v, err := store.ParkedBodyVersions(context.Background(), "P-1", "sha256:faked")
			var se *orders.StoreError
			switch {
			case tc.refused && (!errors.As(err, &se) || se.Transient() || !strings.Contains(err.Error(), "without id and _etag")):
				t.Errorf("versions %v, %v; want a permanent error naming the document", v, err)
			case !tc.refused && (err != nil || v["P-1:body"] != `"0a00"`):
				t.Errorf("versions %v, %v; want P-1:body at its _etag", v, err)
			}
		})
	}
}
