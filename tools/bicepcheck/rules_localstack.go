package bicepcheck

import (
	"fmt"
	"strconv"

	"github.com/ordersink/orders-consumer/tools/bicepcheck/localstack"
)

// RuleLocalStack: the Service Bus emulator of the local Core Tools stack must behave like the
// namespace Bicep deploys, or a local run would test other redelivery and dedup rules.
const RuleLocalStack = "local-stack"

// emulatorMaxDuplicateWindow is the emulator's upper bound for the duplicate detection window
// (its Config-schema.json: PT5M); a longer Bicep window is clamped to it locally.
const emulatorMaxDuplicateWindow = 5 * 60

func checkLocalStack(p *Project) []Finding {
	stack, err := localstack.Load(p.App.Root)
	if err != nil {
		return []Finding{{Rule: RuleLocalStack, File: localstack.ComposeFile, Line: 1, Message: err.Error()}}
	}
	var out []Finding
	for _, msg := range localstack.Check(stack, p.App) {
		out = append(out, Finding{Rule: RuleLocalStack, File: localstack.ConfigFile, Line: 1, Message: msg})
	}
	for _, q := range p.resources(typeQueue) {
		out = append(out, compareQueue(q, stack)...)
	}
	for _, t := range p.resources(typeTopic) {
		if name := t.Name(); name != "" && !stack.HasTopic(name) {
			out = append(out, t.finding(RuleLocalStack, "topic %s is not declared in %s", name, localstack.ConfigFile))
		}
	}
	return out
}

// compareQueue holds one Bicep queue against the emulator queue of the same name: duplicate
// detection (and its window, clamped to what the emulator allows), maxDeliveryCount, lock.
func compareQueue(q located, stack *localstack.Stack) []Finding {
	name := q.Name()
	if name == "" {
		return nil
	}
	e, ok := stack.Queue(name)
	if !ok {
		return []Finding{q.finding(RuleLocalStack, "queue %s is not declared in %s", name, localstack.ConfigFile)}
	}
	props := q.Body.Get("properties")
	var out []Finding
	differ := func(what, bicep, emulator string) {
		out = append(out, q.finding(RuleLocalStack, "queue %s: %s is %s in Bicep but %s in %s", name, what, bicep, emulator, localstack.ConfigFile))
	}
	if dd := props.Get("requiresDuplicateDetection").IsBool(true); dd != e.Properties.RequiresDuplicateDetection {
		differ("requiresDuplicateDetection", strconv.FormatBool(dd), strconv.FormatBool(e.Properties.RequiresDuplicateDetection))
	}
	if v := props.Get("maxDeliveryCount"); v != nil && v.Text != strconv.Itoa(e.Properties.MaxDeliveryCount) {
		differ("maxDeliveryCount", v.Text, strconv.Itoa(e.Properties.MaxDeliveryCount))
	}
	if b, ok := isoSeconds(q.File.Literal(props.Get("lockDuration"))); ok {
		if l, _ := isoSeconds(e.Properties.LockDuration); l != b {
			differ("lockDuration", q.File.Literal(props.Get("lockDuration")), e.Properties.LockDuration)
		}
	}
	if b, ok := isoSeconds(q.File.Literal(props.Get("duplicateDetectionHistoryTimeWindow"))); ok && e.Properties.RequiresDuplicateDetection {
		want := min(b, emulatorMaxDuplicateWindow)
		if w, _ := isoSeconds(e.Properties.DuplicateDetectionHistoryTimeWindow); w != want {
			differ("the duplicate detection window (clamped to the emulator's PT5M)", fmt.Sprintf("%ds", want), e.Properties.DuplicateDetectionHistoryTimeWindow)
		}
	}
	return out
}
