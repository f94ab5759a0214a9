package handler

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/handler/handlertest"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/orders/orderstest"
)

// The workbook's queries (bicep/modules/workbook) read the handler's log
// line; nothing else ties the two, so a renamed field would leave a panel
// silently empty. Every field a query names must be one the handler writes
// for some outcome.
func TestWorkbookQueriesNameFieldsTheHandlerLogs(t *testing.T) {
	raw, err := os.ReadFile("../bicep/modules/workbook/orders.workbook.json")
	if err != nil {
		t.Fatal(err)
	}
	var wb struct {
		Items []struct {
			Type    int
			Name    string
			Content struct{ Query string }
		}
	}
	if err := json.Unmarshal(raw, &wb); err != nil {
		t.Fatalf("workbook is not JSON: %v", err)
	}
	bicep, err := os.ReadFile("../bicep/modules/monitoring.bicep")
	if err != nil || !bytes.Contains(bicep, []byte("loadTextContent('workbook/orders.workbook.json')")) {
		t.Fatalf("monitoring.bicep does not ship the workbook (%v)", err)
	}

	logged := loggedFields(t)
	field := regexp.MustCompile(`\bd\.([A-Za-z]+)`)
	queries := 0
	for _, it := range wb.Items {
		if it.Type != 3 {
			continue
		}
		queries++
		if !strings.HasPrefix(it.Content.Query, "traces\n") {
			t.Errorf("%s: query does not read traces: %q", it.Name, it.Content.Query)
		}
		for _, m := range field.FindAllStringSubmatch(it.Content.Query, -1) {
			if !logged[m[1]] {
				t.Errorf("%s: query reads d.%s, which no handler log line has", it.Name, m[1])
			}
		}
	}
	if queries < 5 {
		t.Errorf("%d query panels, want outcomes, duplicates by cause, parked by reason, latency and request units", queries)
	}
}

// loggedFields runs a created, a duplicate, a mismatch and an invalid message
// through the real handler and returns every field of their log lines, with
// requestCharge from the Cosmos store's own meter (MemStore reports none).
func loggedFields(t *testing.T) map[string]bool {
	s := startServerWith(t, Config{Processor: &orders.Processor{Store: orderstest.NewMemStore()}})
	id, body := handlertest.UniqueOrder(t)
	other := bytes.Replace(body, []byte(`"CUST-42"`), []byte(`"CUST-43"`), 1)
	for _, req := range [][]byte{hostInvocation(body, id, 1), hostInvocation(body, id, 2),
		hostInvocation(other, id, 1), hostInvocation([]byte(`{"orderId":`), "bad", 1)} {
		s.invoke(t, req)
	}
	fields := map[string]bool{"requestCharge": true} // TestProcessOrderLogsDuplicateCauseAndRequestCharge
	for _, line := range strings.Split(strings.TrimSpace(s.Logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		for k := range m {
			fields[k] = true
		}
	}
	for _, k := range []string{"outcome", "duplicateCause", "reason", "durationMs"} {
		if !fields[k] {
			t.Fatalf("the handler logged no %s field in %s", k, s.Logs.String())
		}
	}
	return fields
}
