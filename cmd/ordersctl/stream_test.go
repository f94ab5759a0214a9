package main

import (
	"encoding/json"
	"testing"

	"github.com/ordersink/orders-consumer/internal/localqueue"
)

// streamed is a message of a stream file as hostemu -stream delivers it.
type streamed struct {
	MessageID, ContentType, Subject string
	Body                            []byte
}

// readStream reads a stream file in the format hostemu -stream reads
// (internal/localqueue), each body decoded to its bytes.
func readStream(t *testing.T, path string) []streamed {
	t.Helper()
	lines, err := localqueue.ReadLines(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]streamed, 0, len(lines))
	for i, b := range lines {
		var rec localqueue.Record
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		body, err := rec.DecodeBody()
		if err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		out = append(out, streamed{MessageID: rec.MessageID, ContentType: rec.ContentType, Subject: rec.Subject, Body: body})
	}
	return out
}
