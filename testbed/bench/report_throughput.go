package bench

import "fmt"

// variantStats summarises one variant over the rounds at one latency.
type variantStats struct {
	name     string
	rates    []float64
	p50, p99 []float64 // ms
	errors   int
	firstErr error
	selfCPU  []float64 // µs per message
	emuCPU   []float64
	busy     []float64 // cores kept busy by the Go process and the emulator together
}

func (lr LatencyRun) stats(v int) variantStats {
	var st variantStats
	for _, round := range lr.Rounds {
		ph := round[v]
		st.name = ph.Variant
		st.rates = append(st.rates, ph.Rate())
		st.p50 = append(st.p50, ms(ph.Percentile(0.5)))
		st.p99 = append(st.p99, ms(ph.Percentile(0.99)))
		st.selfCPU = append(st.selfCPU, us(ph.CPUPerMessage(ph.SelfCPU)))
		if ph.EmulatorCPU > 0 {
			st.emuCPU = append(st.emuCPU, us(ph.CPUPerMessage(ph.EmulatorCPU)))
			st.busy = append(st.busy, (ph.SelfCPU+ph.EmulatorCPU).Seconds()/ph.Elapsed.Seconds())
		}
		st.errors += ph.Errors
		if st.firstErr == nil {
			st.firstErr = ph.FirstErr
		}
	}
	return st
}

// ratios returns num/den within each round.
func (lr LatencyRun) ratios(num, den int) []float64 {
	var out []float64
	for _, round := range lr.Rounds {
		out = append(out, round[num].Rate()/round[den].Rate())
	}
	return out
}

// ratio is one row of the ratio table: a question and the figure that
// answers it.
type ratio struct {
	num, den int
	name     string
	question string
	target   string
}

// ratioRows are the rows of the ratio table, in order.
var ratioRows = []ratio{
	{VarHandlerBatch, VarHandlerSingle, "`ProcessOrderBatch` ÷ `ProcessOrder`",
		"Does batch mode pay for itself?", "≥ 1 at 20 ms"},
	{VarHandlerSingle, VarPlainBatch, "`ProcessOrder` ÷ plain batch loop",
		"What does the handler add to its Cosmos call?", "≥ 0.9"},
	{VarHandlerSingle, VarPlainCreate, "`ProcessOrder` ÷ plain create loop",
		"What does it cost against the simplest writer?", "≥ 0.9"},
	{VarHandlerDirect, VarPlainBatch, "in process ÷ plain batch loop",
		"How much of that is the loopback HTTP hop?", ""},
	{VarPlainBatch, VarPlainCreate, "plain batch loop ÷ plain create loop",
		"What does the outbox event cost?", ""},
	{VarHandlerBatch, VarPlainBatchWide, "`ProcessOrderBatch` ÷ plain batch loop as wide",
		"How close does batch mode come to the SDK?", ""},
}

func (r *Report) throughput(p func(string, ...any)) {
	if len(r.Throughput) == 0 {
		return
	}
	s := r.Settings
	p("## Throughput: single, batch, and a plain azcosmos loop")
	p("")
	p("%d new orders per variant, distance and round. Plain loops call azcosmos with the handler's bytes", s.Messages)
	p("(order, and in the batch loop its outbox event). `ProcessOrder`: %d host-format invocations at once;", s.Concurrency)
	p("`ProcessOrderBatch`: %d messages each, %d at a time, `BATCH_PARALLELISM` %d.", s.BatchSize, s.BatchConcurrency, s.BatchParallelism)
	p("")
	r.throughputSummary(p)
	r.boundNote(p)
	r.ratioTable(p)
	r.batchNote(p)
	r.cpuNote(p)
	r.throughputErrors(p)
}

// throughputErrors names every variant that met an error, with its first;
// the short report has no per-latency table to show them in.
func (r *Report) throughputErrors(p func(string, ...any)) {
	for _, lr := range r.Throughput {
		for v := range numVariants {
			if st := lr.stats(v); st.errors > 0 {
				p("- **Errors**: %s at %s: %d, first: `%v`", st.name, latencyName(lr.Latency), st.errors, st.firstErr)
			}
		}
	}
	p("")
}

// cpuNote explains the 0 ms figures by what bound them in this run: the two
// cores when the Go process and the emulator kept them busy, other work on
// the machine when they did not.
func (r *Report) cpuNote(p func(string, ...any)) {
	lr := r.Throughput[0]
	if lr.Latency > 0 {
		return
	}
	st := lr.stats(VarHandlerSingle)
	if len(st.busy) == 0 {
		return
	}
	b := median(st.busy)
	p("At 0 ms `ProcessOrder` cost %.0f µs CPU per message in Go and %.0f µs in the emulator, %.2f of %d cores", median(st.selfCPU), median(st.emuCPU), b, r.Machine.Cores)
	if b < 0.8*float64(r.Machine.Cores) {
		p("busy: other work took the rest, so the 0 ms figures say little in this run.")
	} else {
		p("busy: the handler's CPU is taken from the emulator; at a distance it is spent while requests wait.")
	}
	p("")
}

// throughputSummary is every variant's median messages/s at every latency.
func (r *Report) throughputSummary(p func(string, ...any)) {
	latencyColumns(p, r.Throughput, "| variant, messages/s (median of the rounds) |", "|---|", "---:|", "")
	for v := range numVariants {
		row := "| " + r.Throughput[0].stats(v).name + " |"
		for _, lr := range r.Throughput {
			row += fmt.Sprintf(" %.0f |", median(lr.stats(v).rates))
		}
		p("%s", row)
	}
	p("")
}

// boundNote says how close ProcessOrder came, at each latency, to what its
// requests in flight allow there: near it, the figures are bound by the
// latency as in a deployment; far below it, by the CPU of the shared machine.
func (r *Report) boundNote(p func(string, ...any)) {
	s := r.Settings
	for _, lr := range r.Throughput {
		if lr.Latency <= 0 {
			continue
		}
		bound := float64(s.Concurrency) / lr.Latency.Seconds()
		got := median(lr.stats(VarHandlerSingle).rates)
		what := "bound by the latency, as in a deployment"
		if got < 0.7*bound {
			what = "held down by the CPU of the shared machine too"
		}
		p("- At %s, %d in flight allow %.0f messages/s; `ProcessOrder` reached %.0f (%.0f %%): %s.",
			latencyName(lr.Latency), s.Concurrency, bound, got, 100*got/bound, what)
	}
	p("")
}

// latencyColumns writes a table's header: the leading columns, one column
// per latency of runs (aligned by align), then the trailing one if any.
func latencyColumns(p func(string, ...any), runs []LatencyRun, head, rule, align, last string) {
	for _, lr := range runs {
		head += " " + latencyName(lr.Latency) + " |"
		rule += align
	}
	if last != "" {
		head += " " + last + " |"
		rule += "---|"
	}
	p("%s", head)
	p("%s", rule)
}

func (r *Report) ratioTable(p func(string, ...any)) {
	latencyColumns(p, r.Throughput, "| question | ratio |", "|---|---|", "---:|", "target")
	for _, q := range ratioRows {
		row := "| " + q.question + " | " + q.name + " |"
		for _, lr := range r.Throughput {
			row += " " + spread(lr.ratios(q.num, q.den), "%.2f") + " |"
		}
		p("%s %s |", row, q.target)
	}
	p("")
	far := r.Throughput[len(r.Throughput)-1]
	m := median(far.ratios(VarHandlerBatch, VarHandlerSingle))
	comparison := "at least as fast as"
	if m < 1 {
		comparison = "slower than"
	}
	p("At %s, batch mode was %s single messages in this run (median ratio %.2f).", latencyName(far.Latency), comparison, m)
	p("")
}

func (r *Report) batchNote(p func(string, ...any)) {
	s := r.Settings
	p("Both make one Cosmos request per order; throughput follows the requests in flight (%d, or %d in a", s.Concurrency, min(s.BatchSize, s.BatchParallelism))
	p("batch, which waits for its slowest message); docs/batch-mode.md weighs the batch's blast radius.")
	single, batch := r.microPerMessage("BenchmarkProcessOrderInProcess/new"), r.microPerMessage("BenchmarkProcessOrderBatchInProcess")
	if single > 0 && batch > 0 {
		p("Handler time per message in process: %s in a batch, %s alone.", dur(batch), dur(single))
	}
	p("")
}
