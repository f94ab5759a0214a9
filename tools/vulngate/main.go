// Command vulngate reads govulncheck's JSON output and fails when the code
// calls a vulnerable symbol that is not on the accepted list. Each accepted
// entry names the finding, the module at the version it was found in, and
// why it is accepted; an entry stops matching as soon as the version
// changes, so a bump that does not fix the finding is reported again.
//
//	govulncheck -format json ./... > out.json
//	vulngate -accepted scripts/vulncheck-accepted.txt out.json
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "vulngate:", err)
		os.Exit(1)
	}
}

// message is one object of govulncheck's JSON stream (only what is read).
type message struct {
	Config *struct {
		ScannerVersion string `json:"scanner_version"`
		DB             string `json:"db"`
		DBLastModified string `json:"db_last_modified"`
		GoVersion      string `json:"go_version"`
	} `json:"config"`
	OSV *struct {
		ID      string `json:"id"`
		Summary string `json:"summary"`
	} `json:"osv"`
	Finding *struct {
		OSV          string  `json:"osv"`
		FixedVersion string  `json:"fixed_version"`
		Trace        []frame `json:"trace"`
	} `json:"finding"`
}

type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
	Receiver string `json:"receiver"`
	Position *struct {
		Filename string `json:"filename"`
		Line     int    `json:"line"`
	} `json:"position"`
}

// called is a vulnerability the code reaches, per module version.
type called struct {
	id, module, version, fixed, example string
}

func (c called) key() string { return c.id + " " + c.module + "@" + c.version }

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("vulngate", flag.ContinueOnError)
	acceptedPath := fs.String("accepted", "", "file of accepted findings: ID MODULE@VERSION REASON per line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: vulngate -accepted FILE GOVULNCHECK.json")
	}
	accepted, err := readAccepted(*acceptedPath)
	if err != nil {
		return err
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()

	found := map[string]*called{}
	summaries := map[string]string{}
	var uncalled = map[string]bool{}
	dec := json.NewDecoder(f)
	for {
		var m message
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("govulncheck output: %w", err)
		}
		switch {
		case m.Config != nil:
			fmt.Fprintf(stdout, "govulncheck %s, %s, database %s (snapshot %s)\n",
				m.Config.ScannerVersion, m.Config.GoVersion, m.Config.DB, m.Config.DBLastModified)
		case m.OSV != nil:
			summaries[m.OSV.ID] = m.OSV.Summary
		case m.Finding != nil && len(m.Finding.Trace) > 0:
			top := m.Finding.Trace[0]
			if top.Function == "" {
				// Module or package level: the code does not reach the
				// vulnerable symbol.
				uncalled[m.Finding.OSV] = true
				continue
			}
			c := called{id: m.Finding.OSV, module: top.Module, version: top.Version, fixed: m.Finding.FixedVersion}
			if c.module == "stdlib" || c.module == "toolchain" {
				c.module = "stdlib"
			}
			if _, ok := found[c.key()]; !ok {
				found[c.key()] = &c
				c.example = describe(m.Finding.Trace)
			}
		}
	}

	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var fresh []string
	for _, k := range keys {
		c := found[k]
		status := "NOT ACCEPTED"
		if reason, ok := accepted[k]; ok {
			status = "accepted: " + reason
		} else {
			fresh = append(fresh, k)
		}
		fmt.Fprintf(stdout, "\n%s %s@%s (fixed in %s): %s\n  called from %s\n  %s\n",
			c.id, c.module, c.version, c.fixed, summaries[c.id], c.example, status)
	}
	for k := range accepted {
		if _, ok := found[k]; !ok {
			fmt.Fprintf(stdout, "\nno longer found, remove from the accepted list: %s\n", k)
		}
	}
	fmt.Fprintf(stdout, "\n%d vulnerabilities reached from the code (%d accepted, %d not); %d more in required modules or imported packages that the code does not reach\n",
		len(found), len(found)-len(fresh), len(fresh), len(uncalled))
	if len(fresh) > 0 {
		return fmt.Errorf("%d vulnerabilities reached from the code are not accepted: %s", len(fresh), strings.Join(fresh, ", "))
	}
	return nil
}

// describe is the first frame of the trace in the code, and the vulnerable
// symbol it reaches.
func describe(trace []frame) string {
	sym := func(f frame) string {
		if f.Receiver != "" {
			return f.Package + "." + strings.TrimPrefix(f.Receiver, "*") + "." + f.Function
		}
		return f.Package + "." + f.Function
	}
	last := trace[len(trace)-1]
	where := sym(last)
	if last.Position != nil {
		where = fmt.Sprintf("%s:%d (%s)", last.Position.Filename, last.Position.Line, sym(last))
	}
	return where + " → " + sym(trace[0])
}

// readAccepted reads "ID MODULE@VERSION REASON…" lines; # starts a comment.
func readAccepted(path string) (map[string]string, error) {
	out := map[string]string{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 || !strings.Contains(fields[1], "@") {
			return nil, fmt.Errorf("%s:%d: want ID MODULE@VERSION REASON, got %q", path, n, line)
		}
		out[fields[0]+" "+fields[1]] = strings.Join(fields[2:], " ")
	}
	return out, sc.Err()
}
