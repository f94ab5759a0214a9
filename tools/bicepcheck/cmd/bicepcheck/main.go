// Command bicepcheck runs the offline checks on a checkout: the function app configuration
// against the contract, then every .bicep file through the parser and the policy rules.
// It prints one line per problem and exits 1 when there is any.
//
//	go run ./cmd/bicepcheck -bicep ../../bicep -app ../..
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ordersink/orders-consumer/tools/bicepcheck"
	"github.com/ordersink/orders-consumer/tools/bicepcheck/appconfig"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bicepcheck:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("bicepcheck", flag.ContinueOnError)
	bicepDir := flags.String("bicep", "bicep", "folder with the .bicep files")
	appRoot := flags.String("app", ".", "function app root (host.json, */function.json)")
	list := flags.Bool("rules", false, "list the rules and exit")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *list {
		for _, r := range bicepcheck.Rules {
			fmt.Fprintf(stdout, "%-17s %s\n", r.ID, r.Doc)
		}
		return nil
	}
	app, err := appconfig.Load(*appRoot)
	if err != nil {
		return err
	}
	problems := 0
	for _, p := range appconfig.Check(app) {
		fmt.Fprintln(stdout, p)
		problems++
	}
	project, err := bicepcheck.Load(*bicepDir, *appRoot)
	if err != nil {
		return err
	}
	for _, f := range project.Check() {
		fmt.Fprintln(stdout, f)
		problems++
	}
	for _, n := range project.Notes() {
		fmt.Fprintln(stdout, n)
	}
	if problems > 0 {
		return fmt.Errorf("%d problem(s)", problems)
	}
	fmt.Fprintf(stdout, "ok: %d .bicep files, %d functions, %d rules\n", len(project.Files), len(app.Functions), len(bicepcheck.Rules))
	return nil
}
