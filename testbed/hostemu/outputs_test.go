package hostemu

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestBindOutputs(t *testing.T) {
	fn := &Function{Name: "F", Bindings: []Binding{
		{Name: "message", Type: "serviceBusTrigger", Direction: "in", QueueName: "orders"},
		{Name: "parking", Type: "serviceBus", Direction: "out", QueueName: "orders-deadletter"},
		{Name: "raw", Type: "serviceBus", Direction: "out", QueueName: "raw", DataType: "binary"},
		{Name: "res", Type: "http", Direction: "out"},
	}}
	tests := []struct {
		name    string
		outputs string
		texts   []string
		trap    bool
	}{
		{"an object is one message, indented", `{"parking":{"a":1,"b":[]}}`, []string{"{\n  \"a\": 1,\n  \"b\": []\n}"}, false},
		{"an array fans out", `{"parking":[{"a":1},"plain text",2.50,true]}`, []string{"{\n  \"a\": 1\n}", "plain text", "2.5", "True"}, false},
		{"a JSON-looking string is parsed first", `{"parking":"[{\"a\":1},{\"a\":2}]"}`, []string{"{\n  \"a\": 1\n}", "{\n  \"a\": 2\n}"}, false},
		{"a string that is valid base64 becomes bytes", `{"parking":"order123"}`, []string{"System.Byte[]"}, true},
		{"not base64: sent as is", `{"parking":"order 12"}`, []string{"order 12"}, false},
		{"missing and null bind nothing", `{"parking":null}`, nil, false},
		{"dates, numbers and escapes are re-printed the host's way",
			`{"parking":{"d":"2026-11-29T10:00:00.1230000Z","n":19.90,"e":1e5,"s":"\u003c\u0026\u003e\u2028"}}`,
			[]string{"{\n  \"d\": \"2026-11-29T10:00:00.123Z\",\n  \"n\": 19.9,\n  \"e\": 100000.0,\n  \"s\": \"<&>\\u2028\"\n}"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var outs map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.outputs), &outs); err != nil {
				t.Fatal(err)
			}
			items, _, err := bindOutputs(fn, Answer{Outputs: outs})
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			trap := false
			for _, it := range items {
				texts = append(texts, it.Text)
				trap = trap || it.Base64Trap
				if it.ContentType != "text/plain" || it.Entity != "orders-deadletter" {
					t.Errorf("item %+v: want text/plain to orders-deadletter", it)
				}
			}
			if !reflect.DeepEqual(texts, tt.texts) || trap != tt.trap {
				t.Errorf("texts %q trap %v, want %q trap %v", texts, trap, tt.texts, tt.trap)
			}
		})
	}
}

func TestNetBase64(t *testing.T) {
	for s, want := range map[string]bool{"": true, "test": true, "ABCD": true, "A1B2": true, "ab c=": true, "ab=c": false,
		"ab c d==": false, "abc=": true, "ab\r\ncd": true, "{\"a\":1}": false, "ORD-1": false, "abcde": false} {
		if _, ok := netBase64(s); ok != want {
			t.Errorf("netBase64(%q) ok = %v, want %v", s, ok, want)
		}
	}
}
