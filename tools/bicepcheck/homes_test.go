package bicepcheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ordersink/orders-consumer/handler"
	"github.com/ordersink/orders-consumer/httpapi"
	"github.com/ordersink/orders-consumer/idempotency"
	"github.com/ordersink/orders-consumer/internal/clocks"
	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/retrying"
	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
)

// TestHandlerDefaultsAreTheirConstants: a default that has a Go constant is that constant, named
// in cmd/handler's DefaultConfig (as the type checker reads it), never a literal that restates
// it: a second home nothing keeps in step.
func TestHandlerDefaultsAreTheirConstants(t *testing.T) {
	settings, err := appconfig.HandlerSettings(filepath.Join(repoRoot, "cmd", "handler"))
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]appconfig.Setting{}
	for _, s := range settings {
		read[s.Name] = s
	}
	for setting, home := range map[string]struct {
		name  string
		value any
	}{
		"RETRY_BUDGET_DELIVERY_COUNT":  {"orders.DefaultRetryBudget", orders.DefaultRetryBudget},
		"MAX_REQUEST_BYTES":            {"handler.DefaultMaxRequestBytes", handler.DefaultMaxRequestBytes},
		"MAX_BATCH_REQUEST_BYTES":      {"handler.DefaultMaxBatchRequestBytes", handler.DefaultMaxBatchRequestBytes},
		"SERVICEBUS_MAX_MESSAGE_BYTES": {"handler.DefaultMaxMessageBytes", handler.DefaultMaxMessageBytes},
		"BATCH_PARALLELISM":            {"handler.DefaultBatchParallelism", handler.DefaultBatchParallelism},
		"MESSAGE_DEADLINE":             {"handler.DefaultMessageDeadline", handler.DefaultMessageDeadline},
		"BATCH_DEADLINE":               {"handler.DefaultBatchDeadline", handler.DefaultBatchDeadline},
		"SUBMIT_DEADLINE":              {"httpapi.DefaultSubmitDeadline", httpapi.DefaultSubmitDeadline},
		"AUTH_ALARM_AFTER":             {"handler.DefaultAuthAlarmAfter", handler.DefaultAuthAlarmAfter},
		"IDEMPOTENCY_LEASE":            {"idempotency.DefaultLease", idempotency.DefaultLease},
		"IDEMPOTENCY_KEY_TTL":          {"idempotency.DefaultTTL", idempotency.DefaultTTL},
		"QUEUE_LOCK_DURATION":          {"clocks.QueueLockDuration", clocks.QueueLockDuration},
		"COSMOS_PROBE_INTERVAL":        {"retrying.DefaultProbeInterval", retrying.DefaultProbeInterval},
	} {
		s, ok := read[setting]
		switch {
		case !ok:
			t.Errorf("cmd/handler reads no setting %s", setting)
		case s.DefaultConstant != home.name:
			t.Errorf("%s: DefaultConfig gives %q (%s), want the constant %s, its one home", setting, s.Default, orLiteral(s.DefaultConstant), home.name)
		case !s.Means(fmt.Sprint(home.value)):
			t.Errorf("%s: default %q, want %v (%s)", setting, s.Default, home.value, home.name)
		}
	}
}

func orLiteral(constant string) string {
	if constant == "" {
		return "a literal"
	}
	return constant
}

// tunable is a number or rule with one home. Its literal, written from the constant, is
// searched in the repository's code and configuration; every other place it appears must read
// the home, be checked against it (allowed, with how), or be a test fixture that restates it
// on purpose.
type tunable struct {
	name, home string
	literal    *regexp.Regexp
	allowed    map[string]string // path → why it may restate the value
}

func tunables() []tunable {
	budget, deliveries := orders.DefaultRetryBudget, orders.DefaultRetryBudget+1
	checked := "checked against the handler's retry budget by bicepcheck rule orders-queue (and localstack for the local stack)"
	return []tunable{
		{"retry budget", "orders/processor.go",
			regexp.MustCompile(`(?i)retry_?budget\w*"?\W{1,4}"?` + strconv.Itoa(budget) + `\b`),
			map[string]string{"cmd/handler/main_test.go": "asserts the defaults the handler loads"}},
		{"orders queue's maxDeliveryCount (the retry budget + 1)", "orders/processor.go",
			regexp.MustCompile(`(?i)max[-_]?delivery[-_]?count\w*"?\s*[:=,]\s*"?` + strconv.Itoa(deliveries) + `\b`),
			map[string]string{
				"bicep/modules/servicebus.bicep":       checked,
				"local/servicebus-config.json":         checked,
				"tools/bicepcheck/testdata":            "valid templates the rules under test read as deployed",
				"tools/bicepcheck/localstack/testdata": "a local stack as deployed, broken elsewhere",
			}},
		{"quantity limit", "orders/validate.go",
			regexp.MustCompile(`(?i)quantity\b.*\b(` + strconv.Itoa(orders.MaxQuantity) + `|` + strconv.Itoa(orders.MaxQuantity+1) + `)\b`),
			map[string]string{
				"orders/order_test.go":                     "asserts the message a reader gets at the limit",
				"orders/limits_test.go":                    "names the boundary case it tests",
				"handler/process_order_body_rules_test.go": "cites docs/contract.md §3, which states the limit",
			}},
		{"deadline share (90 %)", "internal/clocks/clocks.go",
			regexp.MustCompile(`\*\s*(0?\.9|9\s*/\s*10)\b`), nil},
		{"Cosmos DB's largest ttl", "internal/clocks/clocks.go",
			regexp.MustCompile(`MaxInt32\s*\*\s*time\.Second|\b1\s*<<\s*31\s*-\s*1\b`), nil},
		{"Service Bus message size", "handler/budget.go",
			regexp.MustCompile(`\b256\s*<<\s*10\b|\b` + strconv.Itoa(handler.DefaultMaxMessageBytes) + `\b`),
			map[string]string{
				"cmd/handler/main_test.go":                     "asserts the defaults the handler loads",
				"testbed/hostemu/outputs.go":                   "the emulated platform's own limit, kept apart so the emulator catches a wrong handler constant",
				"tools/bicepcheck/appconfig/settings.go":       "parses docs/contract.md §2's cells; the example is one of them",
				"tools/bicepcheck/appconfig/appconfig_test.go": "a contract table cell as written in the docs",
			}},
		{"Cosmos DB's transactional batch size", "cosmos/batch.go",
			regexp.MustCompile(`\b2\s*<<\s*20\b|\b2097152\b`),
			map[string]string{
				"orders/orderstest/memstore.go":        "imports no Azure; compared by cosmos/limits_test.go",
				"httpapi/submit_order_request_test.go": "Cosmos DB's document limit, another limit of the same size",
			}},
		{"request sizes", "handler/server.go, handler/process_order_batch.go",
			regexp.MustCompile(`\b(` + strconv.Itoa(handler.DefaultMaxRequestBytes) + `|` + strconv.Itoa(handler.DefaultMaxBatchRequestBytes) + `)\b`),
			map[string]string{"cmd/handler/main_test.go": "asserts the defaults the handler loads"}},
	}
}

// scanned are the files a tunable may hide in: code, scripts, configuration and templates.
// Markdown is left to the docs, which explain the numbers.
var scanned = regexp.MustCompile(`\.(go|sh|bicep|json|yaml|yml)$`)

// TestEachTunableHasOneHome fails when a tunable's literal appears outside its home, a place
// checked against it, or a fixture that restates it on purpose: a second home has come back.
func TestEachTunableHasOneHome(t *testing.T) {
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && scanned.MatchString(path) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tu := range tunables() {
		homes := strings.Split(tu.home, ", ")
		for _, path := range files {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				t.Fatal(err)
			}
			rel = filepath.ToSlash(rel)
			if isAllowed(rel, homes, tu.allowed) {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(src), "\n") {
				if tu.literal.MatchString(line) {
					t.Errorf("%s:%d restates the %s, whose home is %s: read it from there (or, for a fixture that must restate it, add the file to the allowlist with why): %s",
						rel, i+1, tu.name, tu.home, strings.TrimSpace(line))
				}
			}
		}
	}
}

func isAllowed(rel string, homes []string, allowed map[string]string) bool {
	for _, h := range homes {
		if rel == h {
			return true
		}
	}
	for prefix := range allowed {
		if rel == prefix || strings.HasPrefix(rel, prefix+"/") {
			return true
		}
	}
	return false
}

// TestOpenAPILimitsAreTheOrdersRules: docs/openapi.yaml states the order's limits for callers'
// tools; each must be the number orders validates with.
func TestOpenAPILimitsAreTheOrdersRules(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	order := func(path ...any) []any { return append([]any{"components", "schemas", "Order", "properties"}, path...) }
	for _, c := range []struct {
		path []any
		want int
	}{
		{order("orderId", "maxLength"), orders.MaxIDLength},
		{order("customerId", "maxLength"), orders.MaxIDLength},
		{order("lines", "maxItems"), orders.MaxLines},
		{order("lines", "items", "properties", "quantity", "maximum"), orders.MaxQuantity},
		{[]any{"paths", "/orders/{orderId}", "get", "parameters", 0, "schema", "maxLength"}, orders.MaxIDLength},
	} {
		if got, ok := at(doc, c.path...).(int); !ok || got != c.want {
			t.Errorf("docs/openapi.yaml %v is %v, want %d (orders/validate.go)", c.path, at(doc, c.path...), c.want)
		}
	}
}

// at follows keys (string) and indexes (int) through a decoded YAML document; nil when a step
// is missing.
func at(v any, path ...any) any {
	for _, step := range path {
		switch k := step.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}
