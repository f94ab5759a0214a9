package bicepcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
)

// RuleParkedLifetime: nothing that can hold an order expires unseen. A parking envelope may
// point at a body kept in Cosmos DB (orders.ParkedBody, and nothing else: bodyRefTargets); the
// body must outlive every envelope that points at it, and must not outlive them all for nothing
// (docs/adr/0013-parked-messages-never-expire.md).
const RuleParkedLifetime = "parked-lifetime"

// parkedBodyTTL is the ttl the handler writes on a parked body's documents, taken from the Go
// package rather than restated; a variable so a test can hold the rule against another value.
var parkedBodyTTL = orders.ParkedBodyTTL

// unlimitedTTL is how ARM spells Service Bus's default, unlimited message time to live
// (TimeSpan.MaxValue); a queue that omits defaultMessageTimeToLive gets it.
const unlimitedTTL = "P10675199DT2H48M5.4775807S"

func checkParkedLifetime(p *Project) []Finding {
	dir := p.HandlerDir
	if dir == "" {
		dir = filepath.Join(p.App.Root, "handler")
	}
	return append(parkedLifetime(p, parkedBodyTTL), bodyRefTargets(dir)...)
}

// parkedLifetime holds the parking queue's message time to live against bodyTTL (seconds; -1:
// never expires, as Cosmos DB reads an item's ttl). Envelopes the broker dead-letters there
// (maxDeliveryCount, when an operator's walk passes one on its last delivery) never expire, so
// a body that expires is always a body some envelope may still point at.
func parkedLifetime(p *Project, bodyTTL int) []Finding {
	q, ok := p.named(typeQueue, appconfig.ParkingQueue)
	if !ok {
		return []Finding{{Rule: RuleParkedLifetime, File: p.Files[0].Path, Line: 1, Message: fmt.Sprintf("no Service Bus queue named %q is declared", appconfig.ParkingQueue)}}
	}
	props := q.Body.Get("properties")
	ttl := props.Get("defaultMessageTimeToLive")
	literal := q.File.Literal(ttl)
	finite := ttl != nil && literal != unlimitedTTL
	var out []Finding
	if bodyTTL != -1 {
		out = append(out, q.finding(RuleParkedLifetime, "an envelope could outlive its body: orders.ParkedBodyTTL is %d s, but envelopes in %s's own dead-letter queue never expire (and an undelivered one waits as long as defaultMessageTimeToLive %s); parked bodies must never expire (-1) and are deleted when their envelope is settled", bodyTTL, appconfig.ParkingQueue, orUnlimited(literal, ttl)))
	}
	switch {
	case ttl != nil && literal == "":
		out = append(out, q.finding(RuleParkedLifetime, "%s: defaultMessageTimeToLive is computed (%s), so nothing proves an envelope never expires; write the unlimited default %s", appconfig.ParkingQueue, textOf(ttl), unlimitedTTL))
	case finite && !props.Get("deadLetteringOnMessageExpiration").IsBool(true):
		out = append(out, q.finding(RuleParkedLifetime, "a parked body could outlive nothing that points at it: %s's envelopes vanish after %s (no dead-lettering on expiry) while orders.ParkedBodyTTL keeps their bodies; parked messages never expire (ADR 0013): set defaultMessageTimeToLive to the unlimited %s", appconfig.ParkingQueue, literal, unlimitedTTL))
	case finite:
		out = append(out, q.finding(RuleParkedLifetime, "%s: defaultMessageTimeToLive %s moves every envelope nobody handled in time out of the parking queue on a fixed date; parked messages never expire (ADR 0013): set it to the unlimited %s", appconfig.ParkingQueue, literal, unlimitedTTL))
	}
	return out
}

func orUnlimited(literal string, v *Value) string {
	switch {
	case v == nil || literal == unlimitedTTL:
		return "(unlimited)"
	case literal == "":
		return textOf(v)
	}
	return literal
}

// checkDeadLetterAlert: a DeadletteredMessages metric alert covers the dead-letter queues of the
// orders queue and of the parking queue (dead letters never expire, and nothing else watches
// them), and so does the workbook.
func checkDeadLetterAlert(p *Project) []Finding {
	want := []string{appconfig.OrdersQueue, appconfig.ParkingQueue}
	covered := map[string]bool{}
	for _, a := range p.resources(typeMetricAlert) {
		for _, c := range a.Body.Get("properties", "criteria", "allOf").itemsOrNil() {
			if a.File.Literal(c.Get("metricName")) != "DeadletteredMessages" {
				continue
			}
			for _, v := range entityNames(a.File, c) {
				covered[v] = true
			}
		}
	}
	var out []Finding
	for _, q := range want {
		if !covered[q] {
			out = append(out, Finding{Rule: RuleAlerts, File: p.Files[0].Path, Line: 1, Message: fmt.Sprintf("no metric alert on DeadletteredMessages with EntityName %s: its dead letters never expire and nothing else would show them", q)})
		}
	}
	return append(out, checkWorkbookDeadLetters(p, want)...)
}

// entityNames returns the queues a criterion's EntityName dimension includes, parameter names
// read as the queue they carry.
func entityNames(f *File, criterion *Value) []string {
	var out []string
	for _, d := range criterion.Get("dimensions").itemsOrNil() {
		if f.Literal(d.Get("name")) != "EntityName" {
			continue
		}
		for _, v := range d.Get("values").itemsOrNil() {
			switch name := f.Literal(v); {
			case name != "":
				out = append(out, name)
			case textOf(v) == "ordersQueueName":
				out = append(out, appconfig.OrdersQueue)
			case textOf(v) == "parkingQueueName":
				out = append(out, appconfig.ParkingQueue)
			}
		}
	}
	return out
}

var loadText = regexp.MustCompile(`loadTextContent\('([^']+)'\)`)

// checkWorkbookDeadLetters reads the workbook a Microsoft.Insights/workbooks resource loads
// (loadTextContent) and wants a metrics chart of DeadletteredMessages filtered to want.
func checkWorkbookDeadLetters(p *Project, want []string) []Finding {
	for _, wb := range p.resources("Microsoft.Insights/workbooks") {
		m := loadText.FindStringSubmatch(textOf(wb.Body.Get("properties", "serializedData")))
		if m == nil {
			continue
		}
		path := filepath.Join(filepath.Dir(wb.File.Path), m[1])
		items, err := workbookMetricItems(path)
		if err != nil {
			return []Finding{wb.finding(RuleAlerts, "workbook %s: %v", m[1], err)}
		}
		for _, it := range items {
			if it.charts("DeadletteredMessages") && it.filtersAll("EntityName", want) {
				return nil
			}
		}
		return []Finding{wb.finding(RuleAlerts, "workbook %s has no metrics chart of DeadletteredMessages for EntityName %s", m[1], strings.Join(want, " and "))}
	}
	return []Finding{{Rule: RuleAlerts, File: p.Files[0].Path, Line: 1, Message: "no workbook (Microsoft.Insights/workbooks with loadTextContent) shows the dead-letter queues"}}
}

func (it workbookMetricItem) charts(metric string) bool {
	return slices.ContainsFunc(it.Content.Metrics, func(m workbookMetric) bool { return strings.HasSuffix(m.Metric, "--"+metric) })
}

func (it workbookMetricItem) filtersAll(key string, values []string) bool {
	for _, f := range it.Content.Filters {
		if f.Key == key && !slices.ContainsFunc(values, func(v string) bool { return !slices.Contains(f.Values, v) }) {
			return true
		}
	}
	return false
}

// workbookMetricItem is the part of a workbook metrics item (type 10, MetricsItem/2.0) the
// check reads.
type workbookMetricItem struct {
	Type    int `json:"type"`
	Content struct {
		Metrics []workbookMetric `json:"metrics"`
		Filters []struct {
			Key    string   `json:"key"`
			Values []string `json:"values"`
		} `json:"filters"`
	} `json:"content"`
}

type workbookMetric struct {
	Metric string `json:"metric"`
}

func workbookMetricItems(path string) ([]workbookMetricItem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var wb struct {
		Items []workbookMetricItem `json:"items"`
	}
	if err := json.Unmarshal(data, &wb); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	var out []workbookMetricItem
	for _, it := range wb.Items {
		if it.Type == 10 {
			out = append(out, it)
		}
	}
	return out, nil
}
