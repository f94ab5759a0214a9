package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/orders"
)

func TestSend(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "order.json")
	body := []byte(`{"orderId":"ORD-5","status":"Shipped","version":2}`)
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	want := orders.MessageID("ORD-5", body)

	t.Run("local: a stream line hostemu reads back byte for byte", func(t *testing.T) {
		stream := filepath.Join(dir, "send.jsonl")
		for range 2 {
			if code, _, errs := ctl(t, "send", "--status", "--stream", stream, file); code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
		}
		msgs := readStream(t, stream)
		if len(msgs) != 2 {
			t.Fatalf("%d messages; want 2", len(msgs))
		}
		if m := msgs[1]; m.MessageID != want || string(m.Body) != string(body) || m.Subject != "OrderStatusChanged" || m.ContentType != "application/json" {
			t.Errorf("read back %+v", m)
		}
	})
	t.Run("Azure, through the sender", func(t *testing.T) {
		snd := &fakeSender{}
		vars := withAzure(t, newFakeQueue(), newFakeQueue(), snd)
		if code, out, _ := ctlEnv(t, vars, "send", "--dry-run", file); code != exitOK || len(snd.sent) != 0 || !strings.Contains(out, want) {
			t.Fatalf("dry run: exit %d, sent %d, %q", code, len(snd.sent), out)
		}
		code, out, errs := ctlEnv(t, vars, "send", "--output", "json", file)
		var got sent
		if code != exitOK || json.Unmarshal([]byte(out), &got) != nil || got.MessageID != want || len(snd.sent) != 1 ||
			*snd.sent[0].MessageID != want || *snd.sent[0].Subject != "OrderPlaced" {
			t.Fatalf("exit %d (%s), %s, sent %+v", code, errs, out, snd.sent)
		}
	})
	t.Run("a body without orderId is refused", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.json")
		_ = os.WriteFile(bad, []byte(`{"status":"x"}`), 0o644)
		if code, _, errs := ctl(t, "send", "--stream", filepath.Join(dir, "x.jsonl"), bad); code != exitError || !strings.Contains(errs, "orderId") {
			t.Errorf("exit %d, %q", code, errs)
		}
	})
}
