package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The whole command runs in process; these cases stop before Cosmos DB is
// needed. testbed/localrun has the end-to-end runs.
func TestRunRefusesBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	tests := []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"-h"}, exitOK, "-kill-handler"},
		{[]string{"-bogus"}, exitError, "flag provided but not defined"},
		{[]string{"extra"}, exitError, "unexpected argument"},
		{[]string{"-orders", "0"}, exitError, "orders must be"},
		{[]string{"-mismatches", "2"}, exitError, "mismatches rate"},
		{[]string{"-stream", missing}, exitError, "no such file"},
		{[]string{"-app", t.TempDir()}, exitError, "host.json"},
		{[]string{"-h"}, exitOK, "-serve"},
		{[]string{"-serve", "-orders", "5"}, exitError, "-orders is about the generated stream"},
		{[]string{"-serve", "-outages", "none"}, exitError, "-outages is about the generated stream"},
		{[]string{"-serve", "-http-addr", "off"}, exitError, "-serve needs the HTTP listener"},
		{[]string{"-serve", "-app", t.TempDir()}, exitError, "host.json"},
		{[]string{"-serve", "-http-orders", "5"}, exitError, "-http-orders is about the generated stream"},
		{[]string{"-http-addr", "off", "-http-orders", "5"}, exitError, "-http-orders needs the HTTP listener"},
		{[]string{"-http-orders", "-1"}, exitError, "HTTP orders must be from 0"},
		{[]string{"-hold-key-completions", "5s"}, exitError, "-hold-key-completions is for -serve"},
		{[]string{"-http-reused", "1.5"}, exitError, "reused rate must be from 0 to 1"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, nil, &stdout, &stderr, nil)
			if code != tt.code || !strings.Contains(stderr.String(), tt.say) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.say)
			}
		})
	}
}

// -function-key names each key as the host does: NAME=VALUE, or a bare
// VALUE named default.
func TestFunctionKeysFlag(t *testing.T) {
	var keys map[string]string
	f := functionKeysFlag{&keys}
	for _, v := range []string{"dev-key", "partner-b=kb", "partner-c=k=c"} {
		if err := f.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	if len(keys) != 3 || keys["default"] != "dev-key" || keys["partner-b"] != "kb" || keys["partner-c"] != "k=c" {
		t.Errorf("keys %v", keys)
	}
	if got := f.String(); got != "default,partner-b,partner-c" {
		t.Errorf("String() %q lists the names, not the values", got)
	}
	for _, bad := range []string{"=v", "name=", ""} {
		if err := f.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}
